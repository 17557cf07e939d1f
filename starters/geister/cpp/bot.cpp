// Starter client for Geister (GPW/GAT contest server protocol), C++17, standard library + POSIX.
//
// Build:  g++ -O2 -std=c++17 -o bot bot.cpp
// Run:    kakehiki play geister --seat 'tcp-cmd:/path/to/bot {host} {port}' --seat builtin:random
//         or over stdin/stdout, without arguments: --seat 'cmd:/path/to/bot'
// Check:  kakehiki check geister --seat 'tcp-cmd:/path/to/bot {host} {port}'
//
// Protocol (docs/protocols/geister.md): ASCII lines; the server ends its lines with CR LF.
//   server: SET?                  -> you: SET:ABCD   (the 4 of your ghosts A..H that are red)
//   server: MOV?<48-char board>   -> you: MOV:A,N    (ghost A..H, direction N E W S)
//   server: OK / OKR / OKB / NG   (accepted / captured red / captured blue / refused)
//   server: WON:/LST:/DRW:<board> the game is over; the server closes the connection.
// The board: 16 groups "x y letter", your ghosts A..H first (R/B), then the opponent's (u for
// unknown); 99 = captured, 88 = escaped; y = 0 is the opponent's side, north.
//
// Strategy (replace it with yours): escape with a blue ghost when one stands on an exit corner,
// otherwise a random legal move, preferring to move forward; red ghosts chosen at random.
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// splitmix64: a tiny generator seeded from the match seed, so a match replays exactly.
static uint64_t rng_state = 0;
static uint64_t next_random() {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

// Connect to host:port, retrying for a few seconds while the server starts; -1 on failure.
static int connect_to(const char* host, const char* port) {
    for (int attempt = 0; attempt < 100; attempt++) {
        addrinfo hints{}, *res = nullptr;
        hints.ai_socktype = SOCK_STREAM;
        if (getaddrinfo(host, port, &hints, &res) == 0) {
            for (addrinfo* a = res; a; a = a->ai_next) {
                int fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
                if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
                    freeaddrinfo(res);
                    int one = 1;
                    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    return fd;
                }
                if (fd >= 0) close(fd);
            }
            freeaddrinfo(res);
        }
        usleep(50000);
    }
    return -1;
}

// A legal move "MOV:X,D" for the 48-character board of a MOV? message.
static std::string choose_move(const std::string& board) {
    static const char* dirs = "NEWS";
    static const int dx[] = {0, 1, -1, 0}, dy[] = {-1, 0, 0, 1};
    int x[8], y[8];
    bool alive[8];
    for (int i = 0; i < 8; i++) {
        x[i] = board[3 * i] - '0';
        y[i] = board[3 * i + 1] - '0';
        char c = board[3 * i + 2];
        alive[i] = c == 'R' || c == 'B';  // captured ghosts show 99 and r/b
    }
    std::vector<std::string> forward, other;
    for (int i = 0; i < 8; i++) {
        if (!alive[i]) continue;
        std::string head = std::string("MOV:") + char('A' + i) + ",";
        bool blue = board[3 * i + 2] == 'B';
        for (int d = 0; d < 4; d++) {
            char dir = dirs[d];
            if (blue && ((x[i] == 0 && y[i] == 0 && (dir == 'N' || dir == 'W')) ||
                         (x[i] == 5 && y[i] == 0 && (dir == 'N' || dir == 'E'))))
                return head + dir;  // a blue ghost escapes: we win
            int nx = x[i] + dx[d], ny = y[i] + dy[d];
            if (nx < 0 || nx > 5 || ny < 0 || ny > 5) continue;
            bool blocked = false;  // by one of our own ghosts
            for (int j = 0; j < 8; j++) blocked |= alive[j] && x[j] == nx && y[j] == ny;
            if (!blocked) (dir == 'N' ? forward : other).push_back(head + dir);
        }
    }
    if (!forward.empty() && (other.empty() || next_random() % 10 < 6))
        return forward[next_random() % forward.size()];
    return other[next_random() % other.size()];
}

int main(int argc, char** argv) {
    const char* seed = std::getenv("KAKEHIKI_SEED");  // the match seed, set by the referee
    rng_state = seed ? std::strtoull(seed, nullptr, 10) : 0;

    FILE* in = stdin;
    FILE* out = stdout;
    if (argc == 3) {  // HOST PORT: the contest's TCP protocol; otherwise stdin/stdout
        int fd = connect_to(argv[1], argv[2]);
        if (fd < 0) {
            std::fprintf(stderr, "cannot connect to %s:%s\n", argv[1], argv[2]);
            return 1;
        }
        in = fdopen(fd, "r");
        out = fdopen(dup(fd), "w");
    }
    char buf[256];
    while (std::fgets(buf, sizeof buf, in)) {  // read lines: TCP may merge messages
        std::string msg(buf);
        while (!msg.empty() && (msg.back() == '\n' || msg.back() == '\r')) msg.pop_back();
        std::string reply;
        if (msg == "SET?") {
            std::string letters = "ABCDEFGH";
            for (int i = 7; i > 0; i--) std::swap(letters[i], letters[next_random() % (i + 1)]);
            reply = "SET:" + letters.substr(0, 4);
        } else if (msg.rfind("MOV?", 0) == 0 && msg.size() >= 52) {
            reply = choose_move(msg.substr(4));
        } else if (msg.rfind("WON:", 0) == 0 || msg.rfind("LST:", 0) == 0 ||
                   msg.rfind("DRW:", 0) == 0) {
            std::fprintf(stderr, "result %s\n", msg.c_str());
            return 0;
        } else {
            continue;  // OK, OKR, OKB, NG
        }
        std::fprintf(out, "%s\r\n", reply.c_str());
        std::fflush(out);
    }
    return 0;
}
