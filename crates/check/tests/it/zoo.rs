//! A zoo of beginner bots: each makes one of the common mistakes on purpose, in at least two
//! languages where the transport differs, and `check`'s diagnosis of it is asserted line by
//! line: the first line about the mistake names its cause, its place in the game's own terms,
//! and the fix. Each check finishes well under 30 s at the games' own limits: a bot that waits
//! for input while it owes a reply (no newline, nothing flushed) is given up on after a second,
//! not at its 30 s set-up limit.

use std::path::Path;
use std::time::{Duration, Instant};

use kakehiki_check::{diagnosis, evaluate, CheckOptions, CheckReport};

/// A zoo bot's file in `dir`.
fn bot(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// `check GAME --seat SEAT [--rules RULES] [--opt K=V ...] --seeds 1`: the report and its
/// diagnosis, which must have taken under 30 s.
fn check(
    game: &str,
    rules: Option<&str>,
    seat: &str,
    opts: &[(&str, &str)],
) -> (CheckReport, String) {
    let mut o = CheckOptions::new(game, seat.parse().unwrap());
    o.rules = rules.map(str::to_string);
    o.seeds = 1;
    for (k, v) in opts {
        o.options.insert(k.to_string(), v.to_string());
    }
    let start = Instant::now();
    let report = evaluate(&o).unwrap();
    let took = start.elapsed();
    let text = diagnosis(&report);
    assert!(took < Duration::from_secs(30), "{seat}: {took:?}\n{text}");
    assert!(!report.passed, "{seat}: {text}");
    (report, text)
}

/// The lines of the diagnosis's first failed match, from its `FAIL` line to the next match.
fn first_failure(text: &str) -> Vec<&str> {
    let mut lines = text.lines().skip_while(|l| !l.starts_with("FAIL  "));
    let mut out: Vec<&str> = lines.next().into_iter().collect();
    out.extend(lines.take_while(|l| l.starts_with("      ")));
    out
}

/// The first failed match's lines are `want`, line by line.
fn assert_first_failure(text: &str, want: &[&str]) {
    let got = first_failure(text);
    assert_eq!(got, want, "\n{text}");
}

const SKIPPED_GPW: &str = "SKIP  your bot failed its start-up the same way twice under rules gpw: check did not play the other 1 planned match of these rules (fix the start-up first)";

/// A reply with no newline, over pipes (sh) and over TCP (bash's /dev/tcp): what arrived, and
/// the fix.
#[test]
fn a_reply_without_a_newline() {
    let dir = tempfile::tempdir().unwrap();
    let pipe = bot(
        dir.path(),
        "nonl.sh",
        "read -r line\nprintf 'SET:ABCD'\ncat > /dev/null\n",
    );
    let tcp = bot(
        dir.path(),
        "nonl_tcp.sh",
        "exec 3<>/dev/tcp/$1/$2\nread -r line <&3\nprintf 'SET:ABCD' >&3\ncat <&3 > /dev/null\n",
    );
    for seat in [
        format!("cmd:sh {pipe}"),
        format!("tcp-cmd:bash {tcp} {{host}} {{port}}"),
    ] {
        let (_, text) = check("geister", Some("gpw"), &seat, &[]);
        assert_first_failure(
            &text,
            &[
                "FAIL  seed 1000, seat 0 of 2 (first seat): 1 error",
                "      set-up: not_ready: SET?: timeout: no reply to SET? (its limit: 30000 ms): check stopped waiting: your bot was waiting to read its input (asleep, using no CPU), so it would never have replied: your bot wrote \"SET:ABCD\" but no newline after it; end each reply with \"\\n\" and flush",
                "      your bot's program: exit code 0",
            ],
        );
        assert!(text.contains(SKIPPED_GPW), "{text}");
    }
}

/// Where check stopped waiting, and why: the bot waits for input while it owes a reply.
const WAITED: &str = "check stopped waiting: your bot was waiting to read its input (asleep, using no CPU), so it would never have replied";

/// A reply with no newline in the other games where a reply is a line: Diplomacy's JSON over
/// pipes (Python) and AIWolf's name over TCP (Python), given up on as soon as the bot waits
/// for input; NAC's turn replies (Python over pipes), taken at the deadline and named.
#[test]
fn a_reply_without_a_newline_in_every_line_game() {
    let dir = tempfile::tempdir().unwrap();
    let dip = bot(
        dir.path(),
        "nonl_dip.py",
        "import sys, json\nfor line in sys.stdin:\n    sys.stdout.write(json.dumps({'ready': True})); sys.stdout.flush()\n",
    );
    let (_, text) = check("diplomacy", None, &format!("cmd:python3 {dip}"), &[]);
    assert_first_failure(
        &text,
        &[
            "FAIL  seed 1000, seat 0 of 7 (first seat) as AUSTRIA, 2 centres: 1 error",
            &format!("      start: not_ready: start: timeout: no reply to start (its limit: 10000 ms): {WAITED}: your bot wrote \"{{\\\"ready\\\": true}}\" but no newline after it; end each reply with \"\\n\" and flush"),
            "      your bot's program: killed by signal 9",
        ],
    );
    let ww = bot(
        dir.path(),
        "nonl_ww.py",
        "import socket, sys, json\n\
         s = socket.create_connection((sys.argv[1], int(sys.argv[2])))\n\
         for line in s.makefile('rb'):\n\
         \x20   if json.loads(line)['request'] == 'NAME':\n\
         \x20       s.sendall(b'zoo')\n",
    );
    let (_, text) = check(
        "werewolf",
        Some("aiwolf-0.6"),
        &format!("tcp-cmd:python3 {ww} {{host}} {{port}}"),
        &[],
    );
    assert_first_failure(
        &text,
        &[
            "FAIL  seed 1000, seat 0 of 15 (first seat) as Agent[01] POSSESSED, dead: 1 error",
            &format!("      day 0: not_ready: no NAME reply (its limit: 5000 ms): {WAITED}: your bot wrote \"zoo\" but no newline after it; end each reply with \"\\n\" and flush"),
            "      your bot's program: exit code 0",
        ],
    );
    let nac = bot(
        dir.path(),
        "nonl_nac.py",
        "import sys\nprint('READY', flush=True)\nfor line in sys.stdin:\n    p = line.split()\n    if len(p) == 2 and p[1] in ('D', 'N'):\n        sys.stdout.write('0 1 2 3 4' if p[1] == 'D' else '0 1'); sys.stdout.flush()\n",
    );
    // A reply without its newline is taken at the deadline: a shorter turn limit than the
    // contest's 1000 ms keeps this check short; the diagnosis does not depend on it.
    let (_, text) = check(
        "nac",
        None,
        &format!("cmd:python3 {nac}"),
        &[("turn_ms", "200")],
    );
    assert_eq!(
        first_failure(&text)[1],
        "      turn 1: invalid_reply: reply \"0 1 2 3 4\": no_newline: your bot wrote no newline after it, so it was taken only at the deadline; end each reply with \"\\n\" and flush",
        "\n{text}"
    );
}

/// Output never flushed: Python's print to a pipe and awk's print are buffered; nothing arrives
/// while the bot runs.
#[test]
fn output_never_flushed() {
    let dir = tempfile::tempdir().unwrap();
    let py = bot(
        dir.path(),
        "noflush.py",
        "import sys\nfor line in sys.stdin:\n    if line.startswith('SET?'):\n        print('SET:ABCD')\n",
    );
    let awk = bot(
        dir.path(),
        "noflush.awk",
        "/^SET\\?/ { print \"SET:ABCD\" }\n",
    );
    for seat in [format!("cmd:python3 {py}"), format!("cmd:awk -f {awk}")] {
        let (_, text) = check("geister", Some("gpw"), &seat, &[]);
        let lines = first_failure(&text);
        assert_eq!(
            lines[..2],
            [
                "FAIL  seed 1000, seat 0 of 2 (first seat): 1 error",
                "      set-up: not_ready: SET?: timeout: no reply to SET? (its limit: 30000 ms): check stopped waiting: your bot was waiting to read its input (asleep, using no CPU), so it would never have replied; nothing arrived: a reply written but not flushed stays in your bot's output buffer; flush after each reply",
            ],
            "\n{text}"
        );
        assert!(text.contains(SKIPPED_GPW), "{text}");
    }
}

/// Output never flushed in the other games: Diplomacy (Python's print to a pipe), NAC (awk's
/// print) and AIWolf over TCP (Python's buffered socket file): given up on as soon as the bot
/// waits for input, with the fix.
#[test]
fn output_never_flushed_in_every_game() {
    let dir = tempfile::tempdir().unwrap();
    let nothing = format!("{WAITED}; nothing arrived: a reply written but not flushed stays in your bot's output buffer; flush after each reply");
    let dip = bot(
        dir.path(),
        "noflush_dip.py",
        "import sys, json\nfor line in sys.stdin:\n    print(json.dumps({'ready': True}))\n",
    );
    let (_, text) = check("diplomacy", None, &format!("cmd:python3 {dip}"), &[]);
    assert_eq!(
        first_failure(&text)[1],
        format!("      start: not_ready: start: timeout: no reply to start (its limit: 10000 ms): {nothing}"),
        "\n{text}"
    );
    let nac = bot(
        dir.path(),
        "noflush_nac.awk",
        "BEGIN { print \"READY\" }\n{ print \"0 0 0 0 0\" }\n",
    );
    let (_, text) = check("nac", None, &format!("cmd:awk -f {nac}"), &[]);
    assert_eq!(
        first_failure(&text)[1],
        format!("      ready: not_ready: READY: timeout: no reply to READY (its limit: 5000 ms): {nothing}"),
        "\n{text}"
    );
    let ww = bot(
        dir.path(),
        "noflush_ww.py",
        "import socket, sys, json\n\
         s = socket.create_connection((sys.argv[1], int(sys.argv[2])))\n\
         r = s.makefile('rb'); w = s.makefile('wb')\n\
         for line in r:\n\
         \x20   if json.loads(line)['request'] == 'NAME':\n\
         \x20       w.write(b'zoo\\n')\n",
    );
    let (_, text) = check(
        "werewolf",
        Some("aiwolf-0.6"),
        &format!("tcp-cmd:python3 {ww} {{host}} {{port}}"),
        &[],
    );
    assert_eq!(
        first_failure(&text)[1],
        format!("      day 0: not_ready: no NAME reply (its limit: 5000 ms): {nothing}"),
        "\n{text}"
    );
}

/// Debug output on stdout, in Geister (Python and sh over pipes), NAC (Python and sh) and
/// Diplomacy (Python and sh): named as debug output, with the fix.
#[test]
fn debug_output_on_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let geister_py = bot(
        dir.path(),
        "g.py",
        "import sys\nfor line in sys.stdin:\n    print('got', line.strip(), flush=True)\n",
    );
    let geister_sh = bot(
        dir.path(),
        "g.sh",
        "while read -r line; do echo \"got $line\"; done\n",
    );
    for seat in [
        format!("cmd:python3 {geister_py}"),
        format!("cmd:sh {geister_sh}"),
    ] {
        let (_, text) = check("geister", Some("gpw"), &seat, &[]);
        let lines = first_failure(&text);
        assert_eq!(
            lines[1],
            "      set-up: invalid_reply: placement \"got SET?\" refused: unknown command \"got SET?\": expected SET:<4 letters A-H> or MOV:<ghost>,<N|E|W|S>; a line that is not a command is most often debug output: write it to stderr (the connection carries only commands)",
            "\n{text}"
        );
        // The same refusal again and again: the match is stopped after three.
        assert_eq!(
            lines.last().copied(),
            Some("      check stopped your bot here after 3 identical errors (the rest of the match would repeat them) and went on to the next match"),
            "\n{text}"
        );
    }

    let nac_py = bot(
        dir.path(),
        "n.py",
        "import sys\nprint('READY', flush=True)\nfor line in sys.stdin:\n    print('debug: a line', flush=True)\n",
    );
    let nac_sh = bot(
        dir.path(),
        "n.sh",
        "echo READY\nwhile read -r line; do echo 'debug: a line'; done\n",
    );
    for seat in [format!("cmd:python3 {nac_py}"), format!("cmd:sh {nac_sh}")] {
        let (_, text) = check("nac", None, &seat, &[]);
        let lines = first_failure(&text);
        assert_eq!(
            lines[1],
            "      turn 1: invalid_reply: reply \"debug: a line\": not_a_number in field 0 \"debug:\", target 0 used; not_a_number in field 1 \"a\", target 0 used; not_a_number in field 2 \"line\", target 0 used (and 2 more); a line that is not numbers is most often debug output: write it to stderr (stdout carries only replies)",
            "\n{text}"
        );
    }

    let dip_py = bot(
        dir.path(),
        "d.py",
        "import sys, json\nfor line in sys.stdin:\n    print('DEBUG got a message', flush=True)\n    print(json.dumps({'ready': True}), flush=True)\n",
    );
    let dip_sh = bot(
        dir.path(),
        "d.sh",
        "while read -r line; do echo 'DEBUG got a message'; echo '{\"ready\": true}'; done\n",
    );
    for seat in [format!("cmd:python3 {dip_py}"), format!("cmd:sh {dip_sh}")] {
        let (_, text) = check("diplomacy", None, &seat, &[]);
        let lines = first_failure(&text);
        assert_eq!(
            lines[..2],
            [
                "FAIL  seed 1000, seat 0 of 7 (first seat) as AUSTRIA, 2 centres: 1 error",
                "      start: not_ready: reply is not valid JSON (expected value at line 1 column 1): DEBUG got a message; a line that is not JSON is most often debug output: write it to stderr (stdout carries only replies)",
            ],
            "\n{text}"
        );
    }
}

/// A client that connects to the wrong port: Python in Geister, bash in Werewolf (both over
/// TCP), Python in the natural-language division (WebSocket). The referee names the address
/// its seat listened on, how the command line gets it, and where the bot connected instead (the
/// referee refused it as "connection refused"); the bot's own error is in its stderr.
#[test]
fn the_wrong_port() {
    let dir = tempfile::tempdir().unwrap();
    let py = bot(
        dir.path(),
        "wrong.py",
        "import socket, sys\nsocket.create_connection((sys.argv[1], int(sys.argv[2]) + 1))\n",
    );
    let sh = bot(
        dir.path(),
        "wrong.sh",
        "exec 3<>/dev/tcp/$1/$(($2 + 1))\nread -r line <&3\n",
    );
    let told = "where this seat listened (its command line gets it as {host} {port})";
    let seat = format!("tcp-cmd:python3 {py} {{host}} {{port}}");
    let (_, text) = check("geister", Some("gpw"), &seat, &[]);
    let lines = first_failure(&text);
    assert_eq!(
        lines[..4],
        [
            "FAIL  seed 1000, seat 0 of 2 (first seat): 1 error",
            &format!("      set-up: not_ready: connect: crash (the client exited before connecting to 127.0.0.1:10000, {told}; your bot connected to 127.0.0.1:10001 instead, which was refused: exit code 1)"),
            "      your bot's program: exit code 1; its stderr began at set-up: Traceback (most recent call last):",
            "      your bot's stderr (last lines):",
        ],
        "\n{text}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l == &"      | ConnectionRefusedError: [Errno 111] Connection refused"),
        "\n{text}"
    );
    let seat = format!("tcp-cmd:bash {sh} {{host}} {{port}}");
    let (_, text) = check("werewolf", Some("aiwolf-0.6"), &seat, &[]);
    let lines = first_failure(&text);
    assert_eq!(
        [lines[0], lines[1], lines[3]],
        [
            "FAIL  seed 1000, seat 0 of 15 (first seat) as Agent[01] POSSESSED, dead: 1 error",
            &format!("      day 0: not_ready: the client exited before connecting to 127.0.0.1:10000, {told}; your bot connected to 127.0.0.1:10001 instead, which was refused: exit code 1"),
            "      your bot's stderr (last lines):",
        ],
        "\n{text}"
    );
    // bash's own error, the first line it wrote, at the request it never answered.
    assert!(
        lines[2].starts_with("      your bot's program: exit code 1; its stderr began at day 0: ")
            && lines[2].contains("wrong.sh"),
        "\n{text}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("/dev/tcp/127.0.0.1/10001: Connection refused")),
        "\n{text}"
    );
    // A WebSocket agent given {url} that adds one to the port, and tries three times.
    let ws = bot(
        dir.path(),
        "wrong_ws.py",
        "import socket, sys, time\nport = int(sys.argv[1].rsplit(':', 1)[1].split('/')[0])\n\
         for _ in range(3):\n    try: socket.create_connection(('127.0.0.1', port + 1))\n\
         \x20   except OSError as e: print(e, file=sys.stderr)\nsys.exit(2)\n",
    );
    let seat = format!("ws-cmd:python3 {ws} {{url}}");
    let (_, text) = check("werewolf-nlp", None, &seat, &[]);
    let lines = first_failure(&text);
    assert_eq!(
        lines[..3],
        [
            "FAIL  seed 1000, seat 0 of 5 (first seat): 1 error",
            "      connect: not_ready: NAME: not running (the agent exited before connecting to 127.0.0.1:8080, where this seat listened (its command line gets it as {url} or {host} {port}); your bot connected to 127.0.0.1:8081 instead (3 attempts), which was refused: exit code 2)",
            "      your bot's program: exit code 2; its stderr began at connect: [Errno 111] Connection refused",
        ],
        "\n{text}"
    );
}

/// The natural-language starter agent (Python over WebSocket) with `patch` applied before its
/// answer to each packet, written to `dir`.
fn nlp_starter(dir: &Path, name: &str, patch: &str) -> String {
    let starter =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../starters/werewolf-nlp/python/bot.py");
    let text = std::fs::read_to_string(starter).unwrap();
    let at = "        reply = agent.answer(json.loads(text))";
    assert!(text.contains(at), "the starter's main loop changed");
    let patched = text.replace(
        at,
        &format!("        packet = json.loads(text)\n{patch}        reply = agent.answer(packet)"),
    );
    bot(dir, name, &patched)
}

/// A WebSocket agent that waits for another message before answering VOTE: check stops
/// waiting once it has been asleep reading its seat's connection for a second (not at the 65 s
/// limit), and says what to do. An agent that waits as long on another socket (as for its
/// language model) is not stopped: only the seat's connection is its input.
#[test]
fn an_agent_waiting_for_another_message() {
    let dir = tempfile::tempdir().unwrap();
    let waits = nlp_starter(
        dir.path(),
        "waits.py",
        "        if packet['request'] == 'VOTE':\n            ws.recv()\n",
    );
    let (_, text) = check(
        "werewolf-nlp",
        None,
        &format!("ws-cmd:python3 {waits} {{url}}"),
        &[],
    );
    assert_eq!(
        first_failure(&text)[..2],
        [
            "FAIL  seed 1000, seat 0 of 5 (first seat): 2 errors",
            "      day 1: timeout: no reply to VOTE (its limit: 65000 ms): check stopped waiting: your bot was waiting to read its input (asleep, using no CPU), so it would never have replied; nothing arrived: your agent is waiting for another message before it answers this request (answer each request before reading the next message)",
        ],
        "\n{text}"
    );
    let model = nlp_starter(
        dir.path(),
        "model.py",
        "        if packet['request'] == 'VOTE' and packet['info']['day'] == 1:\n            \
         a, b = socket.socketpair()\n            b.settimeout(1.5)\n            \
         try:\n                b.recv(1)\n            except socket.timeout:\n                pass\n",
    );
    let mut o = CheckOptions::new(
        "werewolf-nlp",
        format!("ws-cmd:python3 {model} {{url}}").parse().unwrap(),
    );
    o.seeds = 1;
    let report = evaluate(&o).unwrap();
    assert!(report.passed, "{}", diagnosis(&report));
}

/// A command line without `{host}` and `{port}` (Python over TCP in Geister, a shell over
/// WebSocket): the bot was never told where its seat is, and the fix is to add them.
#[test]
fn a_command_line_without_the_address() {
    let dir = tempfile::tempdir().unwrap();
    let py = bot(dir.path(), "quiet.py", "print('hello')\n");
    let (_, text) = check(
        "geister",
        Some("gpw"),
        &format!("tcp-cmd:python3 {py}"),
        &[],
    );
    assert_eq!(
        first_failure(&text)[1],
        "      set-up: not_ready: connect: crash (the client exited before connecting to 127.0.0.1:10000, where this seat listened (its command line has no {host} {port}, so your bot was never told where to connect: add it, as in tcp-cmd:./bot {host} {port}): exit code 0)",
        "\n{text}"
    );
    let (_, text) = check("werewolf-nlp", None, "ws-cmd:sh -c 'exit 0'", &[]);
    assert_eq!(
        first_failure(&text)[1],
        "      connect: not_ready: NAME: not running (the agent exited before connecting to 127.0.0.1:8080, where this seat listened (its command line has no {url} or {host} {port}, so your bot was never told where to connect: add it, as in ws-cmd:./agent {url}): exit code 0)",
        "\n{text}"
    );
}

/// A crash mid-game (Python): the ply it happened at, the exit code and the exception, the
/// last line of the stderr tail.
#[test]
fn a_crash_names_its_ply_exit_code_and_exception() {
    let dir = tempfile::tempdir().unwrap();
    let py = bot(
        dir.path(),
        "crash.py",
        "import sys\nfor line in sys.stdin:\n    if line.startswith('SET?'):\n        print('SET:ABCD', flush=True)\n    elif line.startswith('MOV?'):\n        x = int(line[100])\n",
    );
    let seat = format!("cmd:python3 {py}");
    let (_, text) = check("geister", Some("gpw"), &seat, &[]);
    let lines = first_failure(&text);
    assert_eq!(
        lines[..4],
        [
            "FAIL  seed 1000, seat 0 of 2 (first seat): 1 error",
            "      ply 1: crash: crash (output closed before the reply: exit code 1)",
            "      your bot's program: exit code 1; its stderr began at ply 1: Traceback (most recent call last):",
            "      your bot's stderr (last lines):",
        ],
        "\n{text}"
    );
    assert_eq!(
        lines.last().copied(),
        Some("      | IndexError: string index out of range"),
        "\n{text}"
    );
}

/// A Geister bot (Python) that plays legal moves, notes something on stderr at its third move
/// and crashes at its fourth: the crash at its ply, and where its stderr began, in the game's
/// own terms, with the line it wrote there.
#[test]
fn a_crash_names_the_ply_its_stderr_began_at() {
    let dir = tempfile::tempdir().unwrap();
    let py = bot(
        dir.path(),
        "late.py",
        r#"import random, sys
moves = 0
for line in sys.stdin:
    msg = line.strip()
    if msg.startswith("SET?"):
        print("SET:ABCD", flush=True)
    elif msg.startswith("MOV?"):
        moves += 1
        if moves == 3:
            print("note: my third move, on", msg[4:10], file=sys.stderr, flush=True)
        if moves == 4:
            raise RuntimeError("my fourth move")
        board = msg[4:]
        own = [(int(board[3*i]), int(board[3*i+1]), board[3*i+2]) for i in range(8)]
        busy = {(x, y) for (x, y, c) in own if c in "RB"}
        legal = []
        for i, (x, y, c) in enumerate(own):
            if c not in "RB":
                continue
            for d, (dx, dy) in (("N", (0, -1)), ("E", (1, 0)), ("W", (-1, 0)), ("S", (0, 1))):
                if 0 <= x + dx < 6 and 0 <= y + dy < 6 and (x + dx, y + dy) not in busy:
                    legal.append((i, d))
        i, d = random.choice(legal)
        print("MOV:%s,%s" % ("ABCDEFGH"[i], d), flush=True)
"#,
    );
    let seat = format!("cmd:python3 {py}");
    let (_, text) = check("geister", Some("gpw"), &seat, &[("pace_ms", "0")]);
    let lines = first_failure(&text);
    assert_eq!(
        lines[..2],
        [
            "FAIL  seed 1000, seat 0 of 2 (first seat): 1 error",
            "      ply 7: crash: crash (output closed before the reply: exit code 1)",
        ],
        "\n{text}"
    );
    assert!(
        lines[2].starts_with(
            "      your bot's program: exit code 1; its stderr began at ply 5: note: my third move, on "
        ),
        "\n{text}"
    );
    assert_eq!(
        lines.last().copied(),
        Some("      | RuntimeError: my fourth move"),
        "\n{text}"
    );
}

/// An AIWolf agent that answers every packet, the ones that ask for no reply too (Python and
/// bash over TCP): the first line names the packet, why every later reply was one behind, and
/// the fix.
#[test]
fn replies_to_packets_that_ask_for_none() {
    let dir = tempfile::tempdir().unwrap();
    let py = bot(
        dir.path(),
        "all.py",
        "import socket, sys, json\n\
         s = socket.create_connection((sys.argv[1], int(sys.argv[2])))\n\
         f = s.makefile('rwb')\n\
         for line in f:\n\
         \x20   req = json.loads(line)['request']\n\
         \x20   out = {'NAME': 'zoo', 'ROLE': 'none', 'TALK': 'Over', 'WHISPER': 'Over'}.get(req, 'ok')\n\
         \x20   if req in ('VOTE', 'DIVINE', 'GUARD', 'ATTACK'):\n\
         \x20       out = '1'\n\
         \x20   if req == 'FINISH':\n\
         \x20       break\n\
         \x20   f.write((out + '\\n').encode()); f.flush()\n",
    );
    let sh = bot(
        dir.path(),
        "all.sh",
        r#"exec 3<>/dev/tcp/$1/$2
while read -r line <&3; do
  case "$line" in
    *'"request":"NAME"'*) echo zoo >&3 ;;
    *'"request":"ROLE"'*) echo none >&3 ;;
    *'"request":"TALK"'*|*'"request":"WHISPER"'*) echo Over >&3 ;;
    *'"request":"VOTE"'*|*'"request":"DIVINE"'*|*'"request":"GUARD"'*|*'"request":"ATTACK"'*) echo 1 >&3 ;;
    *'"request":"FINISH"'*) exit 0 ;;
    *) echo ok >&3 ;;
  esac
done
"#,
    );
    for seat in [
        format!("tcp-cmd:python3 {py} {{host}} {{port}}"),
        format!("tcp-cmd:bash {sh} {{host}} {{port}}"),
    ] {
        let (_, text) = check("werewolf", Some("aiwolf-0.6"), &seat, &[]);
        let lines = first_failure(&text);
        assert_eq!(
            lines[1],
            "      day 0: unsolicited_output: your bot replied \"ok\" to INITIALIZE, which asks for no reply (only NAME, ROLE, TALK, WHISPER, VOTE, ATTACK, DIVINE and GUARD do); every later reply is one behind: reply only to those requests",
            "\n{text}"
        );
        assert_eq!(
            lines[2],
            "      day 0: unsolicited_output: your bot replied \"ok\" to DAILY_INITIALIZE, which asks for no reply: discarded",
            "\n{text}"
        );
    }
}

/// An agent that reads one request and exits with status 3 (Python and bash over TCP): its own
/// exit code and stderr, not a signal.
#[test]
fn a_tcp_agent_that_exits_keeps_its_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let py = bot(
        dir.path(),
        "exit3.py",
        "import socket, sys\ns = socket.create_connection((sys.argv[1], int(sys.argv[2])))\n\
         s.makefile('rb').readline()\nsys.stderr.write('giving up\\n')\nsys.exit(3)\n",
    );
    let sh = bot(
        dir.path(),
        "exit3.sh",
        "exec 3<>/dev/tcp/$1/$2\nread -r line <&3\necho 'giving up' >&2\nexit 3\n",
    );
    for seat in [
        format!("tcp-cmd:python3 {py} {{host}} {{port}}"),
        format!("tcp-cmd:bash {sh} {{host}} {{port}}"),
    ] {
        let (_, text) = check("werewolf", Some("aiwolf-0.6"), &seat, &[]);
        assert_first_failure(
            &text,
            &[
                "FAIL  seed 1000, seat 0 of 15 (first seat) as Agent[01] POSSESSED, dead: 1 error",
                "      day 0: not_ready: disconnected before NAME: connection closed by the client (EOF)",
                "      your bot's program: exit code 3; its stderr began at day 0: giving up",
                "      your bot's stderr (last lines):",
                "      | giving up",
            ],
        );
    }
}
