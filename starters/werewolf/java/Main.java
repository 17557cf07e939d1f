// Starter agent for Werewolf (AIWolf 0.6.x TCP protocol), Java, standard library only.
//
// Build:  javac -d out Main.java
// Usage:  java -cp out Main HOST PORT [NAME [ROLE]]   (ROLE: the role to ask for, e.g. SEER)
// Run:    kakehiki play werewolf --seat 'tcp-cmd:java -cp /path/to/out Main {host} {port}' --fill builtin:sample
// Check:  kakehiki check werewolf --seat 'tcp-cmd:java -cp /path/to/out Main {host} {port}'
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
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

public class Main {
    static Random rng;

    // ---- A minimal JSON reader (enough for the server's packets) --------------------------------
    // Objects become Map<String, Object>, arrays List<Object>, numbers Long or Double, strings
    // String, true/false Boolean, null null.
    static final class JsonParser {
        private final String s;
        private int i;

        JsonParser(String s) { this.s = s; }

        static Object parse(String s) { return new JsonParser(s).value(); }

        private void ws() { while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++; }

        private void expect(char c) {
            ws();
            if (i >= s.length() || s.charAt(i) != c) throw new IllegalArgumentException("JSON: expected " + c + " at " + i);
            i++;
        }

        private String str() {
            expect('"');
            StringBuilder out = new StringBuilder();
            while (i < s.length() && s.charAt(i) != '"') {
                char c = s.charAt(i++);
                if (c != '\\') { out.append(c); continue; }
                char e = s.charAt(i++);
                switch (e) {
                    case 'n': out.append('\n'); break;
                    case 't': out.append('\t'); break;
                    case 'r': out.append('\r'); break;
                    case 'b': out.append('\b'); break;
                    case 'f': out.append('\f'); break;
                    case 'u': out.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; break;
                    default: out.append(e); // \" \\ \/
                }
            }
            expect('"');
            return out.toString();
        }

        private Object value() {
            ws();
            if (i >= s.length()) throw new IllegalArgumentException("JSON: unexpected end");
            char c = s.charAt(i);
            if (c == '{') {
                i++;
                Map<String, Object> obj = new LinkedHashMap<>();
                ws();
                if (s.charAt(i) == '}') { i++; return obj; }
                while (true) {
                    String key = str();
                    expect(':');
                    obj.put(key, value());
                    ws();
                    if (i < s.length() && s.charAt(i) == ',') { i++; continue; }
                    expect('}');
                    return obj;
                }
            }
            if (c == '[') {
                i++;
                List<Object> arr = new ArrayList<>();
                ws();
                if (s.charAt(i) == ']') { i++; return arr; }
                while (true) {
                    arr.add(value());
                    ws();
                    if (i < s.length() && s.charAt(i) == ',') { i++; continue; }
                    expect(']');
                    return arr;
                }
            }
            if (c == '"') return str();
            if (s.startsWith("true", i)) { i += 4; return Boolean.TRUE; }
            if (s.startsWith("false", i)) { i += 5; return Boolean.FALSE; }
            if (s.startsWith("null", i)) { i += 4; return null; }
            int start = i;
            while (i < s.length() && "+-.eE0123456789".indexOf(s.charAt(i)) >= 0) i++;
            String num = s.substring(start, i);
            if (num.isEmpty()) throw new IllegalArgumentException("JSON: unexpected character at " + i);
            if (num.matches("-?\\d+")) return Long.parseLong(num);
            return Double.parseDouble(num);
        }
    }


    @SuppressWarnings("unchecked")
    static Map<String, Object> obj(Object o) {
        return o instanceof Map ? (Map<String, Object>) o : new LinkedHashMap<>();
    }

    @SuppressWarnings("unchecked")
    static List<Object> list(Object o) {
        return o instanceof List ? (List<Object>) o : new ArrayList<>();
    }

    static long num(Object o) { return o instanceof Number ? ((Number) o).longValue() : 0; }

    static String text(Object o) { return o instanceof String ? (String) o : ""; }

    String name, wish; // our name; the role asked for at ROLE
    int me; // our agent number
    Map<Integer, String> roles = new HashMap<>(); // our own role; a werewolf also sees the others
    List<Integer> alive = new ArrayList<>(); // from the latest gameInfo's statusMap
    int talks; // our talks today
    int suspect = -1; // whom we vote for today
    String announce; // the seer's divination to tell the village
    Set<Integer> divined = new HashSet<>();

    static String agentName(long agent) { return String.format("Agent[%02d]", agent); }

    List<Integer> others(boolean excludeWolves) {
        List<Integer> out = new ArrayList<>();
        for (int a : alive) {
            if (a != me && !(excludeWolves && "WEREWOLF".equals(roles.get(a)))) out.add(a);
        }
        return out;
    }

    static int pick(List<Integer> candidates) {
        return candidates.isEmpty() ? -1 : candidates.get(rng.nextInt(candidates.size()));
    }

    void update(Map<String, Object> info, String request) {
        me = (int) num(info.get("agent"));
        roles.clear();
        for (Map.Entry<String, Object> e : obj(info.get("roleMap")).entrySet()) {
            roles.put(Integer.parseInt(e.getKey()), text(e.getValue()));
        }
        alive.clear();
        for (Map.Entry<String, Object> e : obj(info.get("statusMap")).entrySet()) {
            if ("ALIVE".equals(e.getValue())) alive.add(Integer.parseInt(e.getKey()));
        }
        if (request.equals("DAILY_INITIALIZE")) { // a new day
            talks = 0;
            suspect = pick(others("WEREWOLF".equals(roles.get(me))));
            Object judge = info.get("divineResult"); // seer only: last night's divination
            if (judge instanceof Map) {
                int target = (int) num(obj(judge).get("target"));
                String result = text(obj(judge).get("result"));
                if (alive.contains(target)) {
                    announce = "DIVINED " + agentName(target) + " " + result;
                    if (result.equals("WEREWOLF")) suspect = target;
                }
            }
        }
    }

    /** The reply line to a packet, or null when the request expects none. */
    String answer(Map<String, Object> packet) {
        String request = text(packet.get("request"));
        if (packet.get("gameInfo") instanceof Map) update(obj(packet.get("gameInfo")), request);
        int target;
        switch (request) {
            case "NAME":
                return name;
            case "ROLE":
                return wish;
            case "TALK":
                talks++;
                if (talks == 1 && suspect > 0) return "VOTE " + agentName(suspect);
                if (announce != null) {
                    String said = announce;
                    announce = null;
                    return said;
                }
                return "Over";
            case "WHISPER":
                return "Over";
            case "VOTE":
                target = others(false).contains(suspect) ? suspect : pick(others(false));
                break;
            case "DIVINE": {
                List<Integer> fresh = others(false);
                fresh.removeAll(divined);
                target = pick(fresh.isEmpty() ? others(false) : fresh);
                divined.add(target);
                break;
            }
            case "GUARD":
                target = pick(others(false));
                break;
            case "ATTACK":
                target = pick(others(true));
                break;
            case "INITIALIZE": // a new game
                divined.clear();
                announce = null;
                return null;
            case "FINISH":
                System.err.println("game over");
                return null;
            default:
                return null; // DAILY_INITIALIZE, DAILY_FINISH: no reply
        }
        return "{\"agentIdx\":" + target + "}"; // no spaces
    }

    /** Connect, retrying for a few seconds while the server starts. */
    static Socket connect(String host, int port) throws IOException, InterruptedException {
        for (int attempt = 0; ; attempt++) {
            try {
                Socket s = new Socket(host, port);
                s.setTcpNoDelay(true);
                return s;
            } catch (IOException e) {
                if (attempt >= 100) throw e;
                Thread.sleep(50);
            }
        }
    }

    public static void main(String[] args) throws IOException, InterruptedException {
        if (args.length < 2) {
            System.err.println("usage: java Main HOST PORT [NAME [ROLE]]");
            System.exit(2);
        }
        // The match seed set by the referee: a match replays exactly from its seed.
        String seed = System.getenv("KAKEHIKI_SEED");
        rng = new Random(seed == null ? 0 : Long.parseUnsignedLong(seed));
        Main agent = new Main();
        agent.name = args.length > 2 ? args[2] : "starter";
        agent.wish = args.length > 3 ? args[3] : "none";

        Socket socket = connect(args[0], Integer.parseInt(args[1]));
        BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
        OutputStream out = socket.getOutputStream();
        String line;
        while ((line = in.readLine()) != null) { // one packet per line, until the server closes
            if (line.isEmpty()) continue;
            String reply = agent.answer(obj(JsonParser.parse(line)));
            if (reply != null) {
                out.write((reply + "\n").getBytes(StandardCharsets.UTF_8));
                out.flush();
            }
        }
    }
}
