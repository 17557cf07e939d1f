// Starter bot for Diplomacy (standard map), C++17, standard library only.
//
// Build:  g++ -O2 -std=c++17 -o bot bot.cpp
// Run:    kakehiki play diplomacy --seat 'cmd:/path/to/bot' --fill builtin:random --max-year 1905
// Check:  kakehiki check diplomacy --seat 'cmd:/path/to/bot'
//
// Protocol (docs/protocols/diplomacy.md): one JSON object per line on stdin, one reply per line on
// stdout (flush!). Every request has a "seq"; echo it in the reply.
//   {"type":"start","power":"FRANCE","powers":[...],...}   -> {"ready":true}
//   {"type":"press","phase":"S1901M","round":1,"inbox":[...]} -> {"messages":[{"to":"ITALY","text":"..."}]}
//   {"type":"phase","phase":"S1901M","orderable":["A PAR",...],"state":{...},"history":[...]}
//                                                         -> {"orders":["A PAR H",...]}
//     (retreat phases "...R": orderable = your dislodged units; adjustment phases "...A":
//      "builds":n with the locations you may build on, or "removals":n with your units)
//   {"type":"end",...}                                      the game is over: exit.
//
// Strategy (replace it with yours): it needs no map. Every unit holds, dislodged units disband,
// builds are armies on randomly chosen offered centres, removals take random units; in the first
// press round it greets one random power.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
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

template <class T>
static void shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i > 1; i--) std::swap(v[i - 1], v[next_random() % i]);
}

// ---- A minimal JSON reader and string quoting (enough for the referee's messages) ----------
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

// A JSON string literal for `text` (quotes and escapes).
static std::string quote(const std::string& text) {
    std::string out = "\"";
    for (unsigned char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += char(c);
        } else if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += char(c);
        }
    }
    return out + "\"";
}

// Send one reply line, echoing the request's seq.
static void reply(const std::string& body, const Json& msg) {
    std::cout << "{" << body << ",\"seq\":" << msg["seq"].integer() << "}" << std::endl;  // flushes
}

static std::string json_list(const std::vector<std::string>& items) {
    std::string out = "[";
    for (size_t i = 0; i < items.size(); i++) out += (i ? "," : "") + quote(items[i]);
    return out + "]";
}

// The orders for one phase message.
static std::vector<std::string> orders_for(const Json& msg) {
    const std::string phase = msg["phase"].text;  // e.g. S1901M, F1901R, W1901A
    const char kind = phase.empty() ? 'M' : phase.back();
    std::vector<std::string> orderable;
    for (const Json& item : msg["orderable"].items) orderable.push_back(item.text);
    std::vector<std::string> orders;
    if (kind == 'R') {  // retreats: disband every dislodged unit ("F TRI D")
        for (const auto& unit : orderable) orders.push_back(unit + " D");
    } else if (kind == 'A') {  // adjustments
        shuffle(orderable);
        size_t builds = msg["builds"].integer(), removals = msg["removals"].integer();
        for (size_t i = 0; i < builds && i < orderable.size(); i++) {
            std::string loc = orderable[i].substr(0, orderable[i].find('/'));  // "STP/NC" -> "STP"
            orders.push_back("A " + loc + " B");  // an army: every home centre takes one
        }
        for (size_t i = 0; i < removals && i < orderable.size(); i++)
            orders.push_back(orderable[i] + " D");  // "A PAR D"
    } else {  // movement: every unit holds ("A PAR H")
        for (const auto& unit : orderable) orders.push_back(unit + " H");
    }
    return orders;
}

int main() {
    const char* seed = std::getenv("KAKEHIKI_SEED");  // the match seed, set by the referee
    rng_state = seed ? std::strtoull(seed, nullptr, 10) : 0;

    std::string power;
    std::vector<std::string> others;
    bool greeted = false;
    std::string line;
    while (std::getline(std::cin, line)) {
        Json msg;
        try {
            msg = parse_json(line);
        } catch (const std::exception& e) {
            std::cerr << "unreadable message: " << e.what() << "\n";
            continue;
        }
        const std::string type = msg["type"].text;
        if (type == "start") {
            power = msg["power"].text;
            for (const Json& p : msg["powers"].items)
                if (p.text != power) others.push_back(p.text);
            reply("\"ready\":true", msg);
        } else if (type == "press") {
            std::vector<std::string> messages;
            if (!greeted && !others.empty()) {  // press: up to 6 messages, each to one power
                greeted = true;
                std::string to = others[next_random() % others.size()];
                messages.push_back("{\"to\":" + quote(to) + ",\"text\":" + quote("Peace between us?") + "}");
            }
            std::string list = "[";
            for (size_t i = 0; i < messages.size(); i++) list += (i ? "," : "") + messages[i];
            reply("\"messages\":" + list + "]", msg);
        } else if (type == "phase") {
            reply("\"orders\":" + json_list(orders_for(msg)), msg);
        } else if (type == "end") {
            std::cerr << power << ": game over (" << msg["reason"].text << ")\n";
            return 0;
        }
    }
    return 0;
}
