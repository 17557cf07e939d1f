// Starter agent for Werewolf (AIWolf 0.6.x TCP protocol), C++17, standard library + POSIX.
//
// Build:  g++ -O2 -std=c++17 -o bot bot.cpp
// Usage:  bot HOST PORT [NAME [ROLE]]   (ROLE: the role to ask for, e.g. SEER; default none)
// Run:    kakehiki play werewolf --seat 'tcp-cmd:/path/to/bot {host} {port}' --fill builtin:sample
// Check:  kakehiki check werewolf --seat 'tcp-cmd:/path/to/bot {host} {port}'
//
// Protocol (docs/protocols/werewolf.md): the server sends one JSON packet per line, with the keys
// request, gameInfo, gameSetting, talkHistory, whisperHistory. Answer these requests with one line:
//   NAME -> your name         ROLE -> none, or the role you would like
//   TALK, WHISPER -> an utterance ("VOTE Agent[03]", "Over", "Skip", ...)
//   VOTE, DIVINE, GUARD, ATTACK -> {"agentIdx":N}
// and nothing to INITIALIZE, DAILY_INITIALIZE, DAILY_FINISH, FINISH. Games follow one another on
// the same connection: read until the server closes it.
//
// Strategy (replace it with yours): each day pick a suspect at random (a werewolf the seer has
// found, if any), say "VOTE Agent[NN]" and vote for it; the seer also announces its last
// divination; divine, guard and attack random valid agents.
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

// splitmix64: a tiny generator seeded from the match seed, so a match replays exactly.
static uint64_t rng_state = 0;
static uint64_t next_random() {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

// ---- A minimal JSON reader (enough for the server's packets) --------------------------------
struct Json {
    enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
    bool boolean = false;
    std::string text;  // a string's value, or a number as written
    std::vector<Json> items;
    std::vector<std::pair<std::string, Json>> members;

    // The member `key` of an object (null if absent), like `obj["key"]` in Python.
    const Json& operator[](const std::string& key) const {
        static const Json null_value;
        for (const auto& m : members)
            if (m.first == key) return m.second;
        return null_value;
    }
    long long integer() const { return kind == Number ? std::atoll(text.c_str()) : 0; }
};

struct JsonParser {
    const std::string& s;
    size_t i = 0;

    void ws() { while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) i++; }
    void expect(char c) {
        ws();
        if (i >= s.size() || s[i] != c) throw std::runtime_error(std::string("JSON: expected ") + c);
        i++;
    }
    static void utf8(std::string& out, unsigned cp) {
        if (cp < 0x80) {
            out += char(cp);
        } else if (cp < 0x800) {
            out += char(0xC0 | (cp >> 6));
            out += char(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += char(0xE0 | (cp >> 12));
            out += char(0x80 | ((cp >> 6) & 0x3F));
            out += char(0x80 | (cp & 0x3F));
        } else {
            out += char(0xF0 | (cp >> 18));
            out += char(0x80 | ((cp >> 12) & 0x3F));
            out += char(0x80 | ((cp >> 6) & 0x3F));
            out += char(0x80 | (cp & 0x3F));
        }
    }
    unsigned hex4() {
        if (i + 4 > s.size()) throw std::runtime_error("JSON: bad \\u escape");
        unsigned v = std::stoul(s.substr(i, 4), nullptr, 16);
        i += 4;
        return v;
    }
    std::string str() {
        expect('"');
        std::string out;
        while (i < s.size() && s[i] != '"') {
            char c = s[i++];
            if (c != '\\') {
                out += c;
                continue;
            }
            if (i >= s.size()) break;
            char e = s[i++];
            switch (e) {
                case 'n': out += '\n'; break;
                case 't': out += '\t'; break;
                case 'r': out += '\r'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'u': {
                    unsigned cp = hex4();
                    if (cp >= 0xD800 && cp < 0xDC00 && i + 6 <= s.size() && s[i] == '\\' && s[i + 1] == 'u') {
                        i += 2;
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (hex4() - 0xDC00);
                    }
                    utf8(out, cp);
                    break;
                }
                default: out += e;  // \" \\ \/
            }
        }
        expect('"');
        return out;
    }
    Json value() {
        ws();
        if (i >= s.size()) throw std::runtime_error("JSON: unexpected end");
        Json v;
        char c = s[i];
        if (c == '{') {
            v.kind = Json::Object;
            i++;
            ws();
            if (i < s.size() && s[i] == '}') {
                i++;
                return v;
            }
            do {
                std::string key = str();
                expect(':');
                v.members.emplace_back(key, value());
                ws();
            } while (i < s.size() && s[i] == ',' && ++i);
            expect('}');
        } else if (c == '[') {
            v.kind = Json::Array;
            i++;
            ws();
            if (i < s.size() && s[i] == ']') {
                i++;
                return v;
            }
            do {
                v.items.push_back(value());
                ws();
            } while (i < s.size() && s[i] == ',' && ++i);
            expect(']');
        } else if (c == '"') {
            v.kind = Json::String;
            v.text = str();
        } else if (s.compare(i, 4, "true") == 0 || s.compare(i, 5, "false") == 0) {
            v.kind = Json::Bool;
            v.boolean = s[i] == 't';
            i += v.boolean ? 4 : 5;
        } else if (s.compare(i, 4, "null") == 0) {
            i += 4;
        } else {
            size_t start = i;
            while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || std::strchr("+-.eE", s[i]))) i++;
            if (start == i) throw std::runtime_error("JSON: unexpected character");
            v.kind = Json::Number;
            v.text = s.substr(start, i - start);
        }
        return v;
    }
};

static Json parse_json(const std::string& line) {
    JsonParser p{line};
    return p.value();
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

static std::string agent_name(int agent) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "Agent[%02d]", agent);  // at least two digits
    return buf;
}

struct Agent {
    std::string name, wish;          // our name; the role asked for at ROLE
    int me = 0;                      // our agent number
    std::map<int, std::string> roles;  // our own role; a werewolf also sees the others
    std::vector<int> alive;          // from the latest gameInfo's statusMap
    int talks = 0;                   // our talks today
    int suspect = -1;                // whom we vote for today
    std::string announce;            // the seer's divination to tell the village
    std::set<int> divined;

    std::vector<int> others(bool exclude_wolves = false) const {
        std::vector<int> out;
        for (int a : alive)
            if (a != me && !(exclude_wolves && roles.count(a) && roles.at(a) == "WEREWOLF"))
                out.push_back(a);
        return out;
    }
    static int pick(const std::vector<int>& candidates) {
        return candidates.empty() ? -1 : candidates[next_random() % candidates.size()];
    }
    bool is_alive(int a) const { return std::find(alive.begin(), alive.end(), a) != alive.end(); }

    void update(const Json& info, const std::string& request) {
        me = (int)info["agent"].integer();
        roles.clear();
        for (const auto& m : info["roleMap"].members) roles[std::atoi(m.first.c_str())] = m.second.text;
        alive.clear();
        for (const auto& m : info["statusMap"].members)
            if (m.second.text == "ALIVE") alive.push_back(std::atoi(m.first.c_str()));
        if (request == "DAILY_INITIALIZE") {  // a new day
            talks = 0;
            suspect = pick(others(roles[me] == "WEREWOLF"));
            const Json& judge = info["divineResult"];  // seer only: last night's divination
            if (judge.kind == Json::Object && is_alive((int)judge["target"].integer())) {
                int target = (int)judge["target"].integer();
                announce = "DIVINED " + agent_name(target) + " " + judge["result"].text;
                if (judge["result"].text == "WEREWOLF") suspect = target;
            }
        }
    }

    // The reply line to a packet, or false when the request expects none.
    bool answer(const Json& packet, std::string& reply) {
        const std::string request = packet["request"].text;
        if (packet["gameInfo"].kind == Json::Object) update(packet["gameInfo"], request);
        int target = -2;
        if (request == "NAME") {
            reply = name;
        } else if (request == "ROLE") {
            reply = wish;
        } else if (request == "TALK") {
            talks++;
            if (talks == 1 && suspect > 0) {
                reply = "VOTE " + agent_name(suspect);
            } else if (!announce.empty()) {
                reply = announce;
                announce.clear();
            } else {
                reply = "Over";
            }
        } else if (request == "WHISPER") {
            reply = "Over";
        } else if (request == "VOTE") {
            auto cand = others();
            target = std::count(cand.begin(), cand.end(), suspect) ? suspect : pick(cand);
        } else if (request == "DIVINE") {
            std::vector<int> fresh;
            for (int a : others())
                if (!divined.count(a)) fresh.push_back(a);
            target = pick(fresh.empty() ? others() : fresh);
            divined.insert(target);
        } else if (request == "GUARD") {
            target = pick(others());
        } else if (request == "ATTACK") {
            target = pick(others(true));
        } else {
            if (request == "INITIALIZE") {  // a new game
                divined.clear();
                announce.clear();
            }
            if (request == "FINISH") std::cerr << "game over\n";
            return false;  // INITIALIZE, DAILY_INITIALIZE, DAILY_FINISH, FINISH: no reply
        }
        if (target != -2) reply = "{\"agentIdx\":" + std::to_string(target) + "}";  // no spaces
        return true;
    }
};

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s HOST PORT [NAME [ROLE]]\n", argv[0]);
        return 2;
    }
    const char* seed = std::getenv("KAKEHIKI_SEED");  // the match seed, set by the referee
    rng_state = seed ? std::strtoull(seed, nullptr, 10) : 0;
    Agent agent;
    agent.name = argc > 3 ? argv[3] : "starter";
    agent.wish = argc > 4 ? argv[4] : "none";

    int fd = connect_to(argv[1], argv[2]);
    if (fd < 0) {
        std::fprintf(stderr, "cannot connect to %s:%s\n", argv[1], argv[2]);
        return 1;
    }
    FILE* in = fdopen(fd, "r");
    FILE* out = fdopen(dup(fd), "w");
    char* buf = nullptr;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&buf, &cap, in)) > 0) {  // one packet per line, until the server closes
        std::string line(buf, n);
        Json packet;
        try {
            packet = parse_json(line);
        } catch (const std::exception& e) {
            std::cerr << "unreadable packet: " << e.what() << "\n";
            continue;
        }
        std::string reply;
        if (agent.answer(packet, reply)) {
            std::fprintf(out, "%s\n", reply.c_str());
            std::fflush(out);
        }
    }
    std::free(buf);
    return 0;
}
