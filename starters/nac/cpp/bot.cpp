// Starter bot for Negotiate and Conquer (`nac`), C++17, standard library only.
//
// Build:  g++ -O2 -std=c++17 -o bot bot.cpp
// Run:    kakehiki play nac --seat 'cmd:./bot' --fill builtin:random
//         (a relative path is resolved against the directory kakehiki runs in)
// Check:  kakehiki check nac --seat 'cmd:/path/to/bot'
//
// Protocol (docs/protocols/nac.md): stdin/stdout, one line per message, flush after every write.
//   1. write READY
//   2. read the settings once: "T P L" (turns, seats, targets), then the L weights
//   3. every turn read the block: "t X" (X = D day / N night), L lines of public affinity (your
//      own first), your real affinity line, and on days the previous turn's pick counts; answer
//      with 5 target indices on a day, 2 on a night.
// After the last turn the referee closes stdin: exit then.
//
// Strategy (replace it with yours): each pick goes to the target with the best weight per point
// of affinity we lack to lead it, with a little seeded noise to break ties.
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <sstream>
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

// Read one line as integers; false at EOF (the game is over).
static bool read_ints(std::vector<long>& out) {
    std::string line;
    if (!std::getline(std::cin, line)) return false;
    out.clear();
    std::istringstream in(line);
    long x;
    while (in >> x) out.push_back(x);
    return true;
}

// How much we want one more point on a target: most when just behind or tied.
static double value(long weight, long mine, long top) {
    long gap = mine - top;
    if (gap < 0) return weight * 100.0 / (1 - gap);
    return weight * 100.0 / (2 + gap);
}

int main() {
    const char* seed = std::getenv("KAKEHIKI_SEED");  // the match seed, set by the referee
    rng_state = seed ? std::strtoull(seed, nullptr, 10) : 0;

    std::cout << "READY" << std::endl;  // std::endl flushes
    std::vector<long> settings, weights;
    if (!read_ints(settings) || settings.size() < 3 || !read_ints(weights)) return 0;
    const long turns = settings[0];
    const size_t targets = settings[2];

    for (long t = 0; t < turns; t++) {
        std::string header;  // "t X"
        if (!std::getline(std::cin, header)) return 0;
        const char label = header.empty() ? 'D' : header.back();
        const bool day = label == 'D' || label == 'W';  // W/H are religion-war's labels
        std::vector<std::vector<long>> pub(targets);
        for (auto& row : pub)
            if (!read_ints(row)) return 0;
        std::vector<long> mine, counts;
        if (!read_ints(mine)) return 0;
        if (day && !read_ints(counts)) return 0;  // last turn's pick counts (unused here)

        const int picks = day ? 5 : 2, gain = day ? 1 : 2;
        std::string reply;
        for (int p = 0; p < picks; p++) {
            size_t best = 0;
            double best_value = -1;
            for (size_t i = 0; i < targets; i++) {
                long top = 0;  // the best rival's public affinity
                for (size_t s = 1; s < pub[i].size(); s++) top = std::max(top, pub[i][s]);
                double v = value(weights[i], mine[i], top) + (next_random() % 1000) / 100.0;
                if (v > best_value) best = i, best_value = v;
            }
            mine[best] += gain;
            if (p) reply += ' ';
            reply += std::to_string(best);
        }
        std::cout << reply << std::endl;
    }
    return 0;
}
