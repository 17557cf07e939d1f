// Starter agent for Werewolf, natural-language division (aiwolf-nlp-server protocol), Java 11 or
// newer, standard library only (the WebSocket client is java.net.http.WebSocket).
//
// Build:  javac -d out Main.java
// Usage:  java -cp out Main URL [NAME]   (URL: ws://host:port/ws, the server's WebSocket address)
// Run:    kakehiki play werewolf-nlp --seat 'ws-cmd:java -cp /path/to/out Main {url}' --fill builtin:sample-en
// Check:  kakehiki check werewolf-nlp --seat 'ws-cmd:java -cp /path/to/out Main {url}'
//
// Protocol (docs/protocols/werewolf-nlp.md, details in docs/werewolf-nlp.md): the server sends
// one JSON packet per WebSocket text message, with the keys request, info, setting, talk_history,
// whisper_history (and new_talk / new_whisper in group-chat mode). Answer these requests with one
// text message:
//   NAME -> your name
//   TALK, WHISPER -> free text ("Over" ends your turn for the day, "Skip" passes this turn)
//   VOTE, DIVINE, GUARD, ATTACK -> a player's in-game name, e.g. "Agent[03]"
// and nothing to INITIALIZE, DAILY_INITIALIZE, DAILY_FINISH, FINISH and the group-chat packets
// (TALK_PHASE_START, ...: this agent stays silent in group chat). One game per connection: the
// server closes it after FINISH, and the agent exits.
//
// Strategy (replace it with yours, e.g. with a language model): each day pick a suspect at random
// (a werewolf the seer has found, if any), say "I will vote for @Agent[NN]." and vote for it; the
// seer also announces its divination ("I divined @Agent[NN]: a werewolf." or "...: human.");
// divine, guard and attack random valid players. These sentences are the built-in agents'
// templates, so builtin:sample and builtin:sample-en understand them.
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;

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

    static String text(Object o) { return o instanceof String ? (String) o : ""; }

    String name; // our NAME
    String me = ""; // our in-game name, e.g. "Agent[02]"
    Map<String, String> roles = new HashMap<>(); // our own role; a werewolf also sees the others
    List<String> alive = new ArrayList<>(); // living players, from the latest info's status_map
    boolean saidVote; // whether we said today whom we vote for
    String suspect; // whom we vote for today
    String announce; // the seer's divination to tell the village
    Set<String> divined = new HashSet<>();

    List<String> others(boolean excludeWolves) {
        List<String> out = new ArrayList<>();
        for (String a : alive) {
            if (!a.equals(me) && !(excludeWolves && "WEREWOLF".equals(roles.get(a)))) out.add(a);
        }
        return out;
    }

    String pick(List<String> candidates) {
        return candidates.isEmpty() ? me : candidates.get(rng.nextInt(candidates.size()));
    }

    void update(Map<String, Object> info, String request) {
        me = text(info.get("agent"));
        roles.clear();
        for (Map.Entry<String, Object> e : obj(info.get("role_map")).entrySet()) {
            roles.put(e.getKey(), text(e.getValue()));
        }
        alive.clear();
        for (Map.Entry<String, Object> e : obj(info.get("status_map")).entrySet()) {
            if ("ALIVE".equals(e.getValue())) alive.add(e.getKey());
        }
        Collections.sort(alive);
        if (request.equals("DAILY_INITIALIZE")) { // a new day
            saidVote = false;
            suspect = pick(others("WEREWOLF".equals(roles.get(me))));
            Object judge = info.get("divine_result"); // seer only: last night's divination
            if (judge instanceof Map) {
                String target = text(obj(judge).get("target"));
                boolean werewolf = "WEREWOLF".equals(obj(judge).get("result"));
                if (alive.contains(target)) {
                    announce = "I divined @" + target + ": " + (werewolf ? "a werewolf" : "human") + ".";
                    if (werewolf) suspect = target;
                }
            }
        }
    }

    /** The answer to a packet, or null when the request expects none. */
    String answer(Map<String, Object> packet) {
        String request = text(packet.get("request"));
        if (packet.get("info") instanceof Map) update(obj(packet.get("info")), request);
        switch (request) {
            case "NAME":
                return name;
            case "INITIALIZE": // a new game: the setting has the limits and the roles
                divined.clear();
                announce = null;
                suspect = null;
                return null;
            case "TALK":
                if (announce != null) {
                    String said = announce;
                    announce = null;
                    return said;
                }
                if (!saidVote && others(false).contains(suspect)) {
                    saidVote = true;
                    return "I will vote for @" + suspect + ".";
                }
                return "Over";
            case "WHISPER":
                return "Over";
            case "VOTE":
                return others(false).contains(suspect) ? suspect : pick(others(false));
            case "DIVINE": {
                List<String> fresh = others(false);
                fresh.removeAll(divined);
                String target = pick(fresh.isEmpty() ? others(false) : fresh);
                divined.add(target);
                return target;
            }
            case "GUARD":
                return pick(others(false));
            case "ATTACK":
                return pick(others(true));
            case "FINISH":
                System.err.println("game over; roles " + obj(packet.get("info")).get("role_map"));
                return null;
            default:
                return null; // DAILY_INITIALIZE, DAILY_FINISH, group chat: no answer
        }
    }

    // ---- The connection: java.net.http.WebSocket delivers messages on its own thread; they are
    // queued here and answered in order on the main thread. -------------------------------------
    static final Object CLOSED = new Object();

    static final class Inbox implements WebSocket.Listener {
        final BlockingQueue<Object> queue = new LinkedBlockingQueue<>();
        private final StringBuilder part = new StringBuilder();

        @Override
        public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
            part.append(data); // a message may come in several parts
            if (last) {
                queue.add(part.toString());
                part.setLength(0);
            }
            ws.request(1); // ready for the next one
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket ws, int code, String reason) {
            queue.add(CLOSED); // the server closed the connection (after FINISH)
            return null;
        }

        @Override
        public void onError(WebSocket ws, Throwable error) {
            System.err.println("websocket: " + error);
            queue.add(CLOSED);
        }
    }

    /** Connect, retrying for a few seconds while the server starts. */
    static WebSocket connect(String url, Inbox inbox) throws InterruptedException {
        HttpClient http = HttpClient.newHttpClient();
        for (int attempt = 0; ; attempt++) {
            try {
                return http.newWebSocketBuilder().buildAsync(URI.create(url), inbox).join();
            } catch (RuntimeException e) {
                if (attempt >= 100) throw e;
                Thread.sleep(50);
            }
        }
    }

    public static void main(String[] args) throws InterruptedException {
        if (args.length < 1) {
            System.err.println("usage: java Main URL [NAME]");
            System.exit(2);
        }
        // The match seed set by the referee: a match replays exactly from its seed.
        String seed = System.getenv("KAKEHIKI_SEED");
        rng = new Random(seed == null ? 0 : Long.parseUnsignedLong(seed));
        Main agent = new Main();
        agent.name = args.length > 1 ? args[1] : "starter";
        Inbox inbox = new Inbox();
        WebSocket ws = connect(args[0], inbox);
        while (true) { // one packet per message, until the server closes the connection
            Object message = inbox.queue.take();
            if (message == CLOSED) break;
            String reply = agent.answer(obj(JsonParser.parse((String) message)));
            if (reply != null) ws.sendText(reply, true).join();
        }
        System.exit(0);
    }
}
