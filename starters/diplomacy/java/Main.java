// Starter bot for Diplomacy (standard map), Java, standard library only.
//
// Build:  javac -d out Main.java
// Run:    kakehiki play diplomacy --seat 'cmd:java -cp /path/to/out Main' --fill builtin:random --max-year 1905
// Check:  kakehiki check diplomacy --seat 'cmd:java -cp /path/to/out Main'
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
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

public class Main {
    static Random rng;
    static PrintStream out = System.out;

    // ---- A minimal JSON reader and string quoting (enough for the referee's messages) ----------
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

    /** A JSON string literal for text. */
    static String quote(String text) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : text.toCharArray()) {
            if (c == '"' || c == '\\') out.append('\\').append(c);
            else if (c < 0x20 || c > 0x7e) out.append(String.format("\\u%04x", (int) c));
            else out.append(c);
        }
        return out.append('"').toString();
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

    /** Send one reply line, echoing the request's seq. */
    static void reply(String body, Map<String, Object> msg) {
        out.print("{" + body + ",\"seq\":" + num(msg.get("seq")) + "}\n");
        out.flush();
    }

    static String jsonList(List<String> items) {
        List<String> quoted = new ArrayList<>();
        for (String s : items) quoted.add(quote(s));
        return "[" + String.join(",", quoted) + "]";
    }

    /** The orders for one phase message. */
    static List<String> ordersFor(Map<String, Object> msg) {
        String phase = text(msg.get("phase")); // e.g. S1901M, F1901R, W1901A
        char kind = phase.isEmpty() ? 'M' : phase.charAt(phase.length() - 1);
        List<String> orderable = new ArrayList<>();
        for (Object o : list(msg.get("orderable"))) orderable.add(text(o));
        List<String> orders = new ArrayList<>();
        if (kind == 'R') { // retreats: disband every dislodged unit ("F TRI D")
            for (String unit : orderable) orders.add(unit + " D");
        } else if (kind == 'A') { // adjustments
            Collections.shuffle(orderable, rng);
            long builds = num(msg.get("builds")), removals = num(msg.get("removals"));
            for (int i = 0; i < builds && i < orderable.size(); i++) {
                String loc = orderable.get(i).split("/")[0]; // "STP/NC" -> "STP"
                orders.add("A " + loc + " B"); // an army: every home centre takes one
            }
            for (int i = 0; i < removals && i < orderable.size(); i++) orders.add(orderable.get(i) + " D");
        } else { // movement: every unit holds ("A PAR H")
            for (String unit : orderable) orders.add(unit + " H");
        }
        return orders;
    }

    public static void main(String[] args) throws IOException {
        // The match seed set by the referee: a match replays exactly from its seed.
        String seed = System.getenv("KAKEHIKI_SEED");
        rng = new Random(seed == null ? 0 : Long.parseUnsignedLong(seed));
        out = new PrintStream(System.out, false, "UTF-8");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));

        String power = "";
        List<String> others = new ArrayList<>();
        boolean greeted = false;
        String line;
        while ((line = in.readLine()) != null) {
            Map<String, Object> msg;
            try {
                msg = obj(JsonParser.parse(line));
            } catch (RuntimeException e) {
                System.err.println("unreadable message: " + e.getMessage());
                continue;
            }
            String type = text(msg.get("type"));
            if (type.equals("start")) {
                power = text(msg.get("power"));
                for (Object p : list(msg.get("powers"))) if (!power.equals(p)) others.add(text(p));
                reply("\"ready\":true", msg);
            } else if (type.equals("press")) {
                List<String> messages = new ArrayList<>();
                if (!greeted && !others.isEmpty()) { // press: up to 6 messages, each to one power
                    greeted = true;
                    String to = others.get(rng.nextInt(others.size()));
                    messages.add("{\"to\":" + quote(to) + ",\"text\":" + quote("Peace between us?") + "}");
                }
                reply("\"messages\":[" + String.join(",", messages) + "]", msg);
            } else if (type.equals("phase")) {
                reply("\"orders\":" + jsonList(ordersFor(msg)), msg);
            } else if (type.equals("end")) {
                System.err.println(power + ": game over (" + text(msg.get("reason")) + ")");
                return;
            }
        }
    }
}
