//! Service tests: the spec's three examples byte for byte, bad lines, and the DATC suite through
//! the service.

use kakehiki_diplomacy::service::{serve, Service};

fn run(input: &str) -> String {
    let mut out = Vec::new();
    serve(input.as_bytes(), &mut out).expect("serve");
    String::from_utf8(out).expect("utf8")
}

const EX1_IN: &str = r#"{"phase":"S1901M","units":{"AUSTRIA":["A BUD","A VIE","F TRI"],"ENGLAND":["A LVP","F EDI","F LON"],"FRANCE":["A MAR","A PAR","F BRE"],"GERMANY":["A BER","A MUN","F KIE"],"ITALY":["A ROM","A VEN","F NAP"],"RUSSIA":["A MOS","A WAR","F SEV","F STP/SC"],"TURKEY":["A CON","A SMY","F ANK"]},"orders":{"ENGLAND":["f edi -> nrg"],"FRANCE":["A PAR - BUR"],"GERMANY":["A MUN - BUR"]}}"#;
const EX1_OUT: &str = r#"{"phase":"S1901M","next_phase":"F1901M","results":{"A MUN":"fails","A PAR":"fails","F EDI":"succeeds"},"units":{"AUSTRIA":["A BUD","A VIE","F TRI"],"ENGLAND":["A LVP","F LON","F NWG"],"FRANCE":["A MAR","A PAR","F BRE"],"GERMANY":["A BER","A MUN","F KIE"],"ITALY":["A ROM","A VEN","F NAP"],"RUSSIA":["A MOS","A WAR","F SEV","F STP/SC"],"TURKEY":["A CON","A SMY","F ANK"]},"dislodged":{},"destroyed":[],"centers":{"AUSTRIA":["BUD","TRI","VIE"],"ENGLAND":["EDI","LON","LVP"],"FRANCE":["BRE","MAR","PAR"],"GERMANY":["BER","KIE","MUN"],"ITALY":["NAP","ROM","VEN"],"RUSSIA":["MOS","SEV","STP","WAR"],"TURKEY":["ANK","CON","SMY"]},"errors":[]}"#;

const EX2_IN1: &str = r#"{"phase":"F1901M","units":{"AUSTRIA":["A TRI","A VIE","F ADR"],"ITALY":["A TYR","A VEN","F NAP"]},"centers":{"AUSTRIA":["BUD","TRI","VIE"],"ITALY":["NAP","ROM","VEN"]},"orders":{"AUSTRIA":["F ADR S A TRI - VEN","A TRI - VEN","A VIE - TYR"],"ITALY":["A VEN H","A TYR S A VEN","F NAP - ROM"]}}"#;
const EX2_OUT1: &str = r#"{"phase":"F1901M","next_phase":"F1901R","results":{"A TRI":"succeeds","A TYR":"fails","A VEN":"fails","A VIE":"fails","F ADR":"succeeds","F NAP":"succeeds"},"units":{"AUSTRIA":["A VEN","A VIE","F ADR"],"ITALY":["A TYR","F ROM"]},"dislodged":{"ITALY":{"A VEN":["APU","PIE","TUS"]}},"destroyed":[],"centers":{"AUSTRIA":["BUD","TRI","VIE"],"ITALY":["NAP","ROM","VEN"]},"errors":[]}"#;
const EX2_IN2: &str = r#"{"phase":"F1901R","units":{"AUSTRIA":["A VEN","A VIE","F ADR"],"ITALY":["A TYR","F ROM"]},"dislodged":{"ITALY":{"A VEN":["APU","PIE","TUS"]}},"centers":{"AUSTRIA":["BUD","TRI","VIE"],"ITALY":["NAP","ROM","VEN"]},"orders":{"ITALY":["A VEN R TUS"]}}"#;
const EX2_OUT2: &str = r#"{"phase":"F1901R","next_phase":"W1901A","results":{"A VEN":"succeeds"},"units":{"AUSTRIA":["A VEN","A VIE","F ADR"],"ITALY":["A TUS","A TYR","F ROM"]},"dislodged":{},"destroyed":[],"centers":{"AUSTRIA":["BUD","TRI","VEN","VIE"],"ITALY":["NAP","ROM"]},"errors":[]}"#;

const EX3_IN: &str = r#"{"phase":"W1901A","units":{"AUSTRIA":["A VEN","A VIE","F ADR"],"ITALY":["A TUS","A TYR","F ROM"]},"centers":{"AUSTRIA":["BUD","TRI","VEN","VIE"],"ITALY":["NAP","ROM"]},"orders":{"AUSTRIA":["F TRI B","A BUD B"]}}"#;
const EX3_OUT: &str = r#"{"phase":"W1901A","next_phase":"S1902M","results":{"A BUD":"fails","F TRI":"succeeds"},"units":{"AUSTRIA":["A VEN","A VIE","F ADR","F TRI"],"ITALY":["A TUS","F ROM"]},"dislodged":{},"destroyed":["A TYR"],"centers":{"AUSTRIA":["BUD","TRI","VEN","VIE"],"ITALY":["NAP","ROM"]},"errors":[]}"#;

#[test]
fn example_1_bounce() {
    assert_eq!(run(EX1_IN), format!("{EX1_OUT}\n"));
}

#[test]
fn example_2_cut_dislodgement_retreat_and_centres() {
    assert_eq!(
        run(&format!("{EX2_IN1}\n{EX2_IN2}\n")),
        format!("{EX2_OUT1}\n{EX2_OUT2}\n")
    );
}

#[test]
fn example_3_builds_and_civil_disorder() {
    assert_eq!(run(EX3_IN), format!("{EX3_OUT}\n"));
}

#[test]
fn blank_lines_are_skipped_and_state_is_not_kept() {
    let out = run(&format!("\n{EX1_IN}\n   \n{EX3_IN}\n{EX1_IN}\n"));
    assert_eq!(out, format!("{EX1_OUT}\n{EX3_OUT}\n{EX1_OUT}\n"));
}

fn error_of(line: &str) -> String {
    let out = Service::new().line(line);
    let v: serde_json::Value = serde_json::from_str(&out).expect("output is JSON");
    let obj = v.as_object().expect("object");
    assert_eq!(obj.len(), 1, "only an error key: {out}");
    obj["error"].as_str().expect("error string").to_string()
}

#[test]
fn bad_lines_give_error_lines() {
    let cases: &[(&str, &str)] = &[
        ("not json", "invalid JSON"),
        ("[1,2]", "not a JSON object"),
        (r#"{"units":{}}"#, "missing phase"),
        (r#"{"phase":"S1901X","units":{}}"#, "malformed phase"),
        (r#"{"phase":"W1901M","units":{}}"#, "malformed phase"),
        (r#"{"phase":"S1901M"}"#, "missing units"),
        (
            r#"{"phase":"S1901M","units":{"PRUSSIA":["A BER"]}}"#,
            "unknown power",
        ),
        (
            r#"{"phase":"S1901M","units":{"GERMANY":["X BER"]}}"#,
            "malformed unit",
        ),
        (
            r#"{"phase":"S1901M","units":{"GERMANY":["A NTH"]}}"#,
            "army at sea",
        ),
        (
            r#"{"phase":"S1901M","units":{"GERMANY":["F MUN"]}}"#,
            "fleet inland",
        ),
        (
            r#"{"phase":"S1901M","units":{"RUSSIA":["F STP"]}}"#,
            "without coast",
        ),
        (
            r#"{"phase":"S1901M","units":{"RUSSIA":["A STP/NC"]}}"#,
            "army with a coast",
        ),
        (
            r#"{"phase":"S1901M","units":{"RUSSIA":["A MOS"],"GERMANY":["A MOS"]}}"#,
            "two units in MOS",
        ),
        (
            r#"{"phase":"S1901M","units":{"ITALY":["A ROM"]},"dislodged":{"ITALY":{"A VEN":["TUS"]}}}"#,
            "outside a retreat phase",
        ),
        (
            r#"{"phase":"S1901R","units":{"ITALY":["A ROM"]},"dislodged":{"ITALY":{"A VEN":["ROM"]}}}"#,
            "occupied",
        ),
        (
            r#"{"phase":"S1901R","units":{},"dislodged":{"ITALY":{"A VEN":["NAP"]}}}"#,
            "unreachable",
        ),
        (
            r#"{"phase":"S1901R","units":{},"dislodged":{"ITALY":{"A VEN":["TUS"]},"AUSTRIA":{"A VEN":["TYR"]}}}"#,
            "two dislodged units",
        ),
        (
            r#"{"phase":"S1901M","units":{},"centers":{"ITALY":["TUS"]}}"#,
            "not a supply centre",
        ),
        (
            r#"{"phase":"S1901M","units":{},"centers":{"ITALY":["ROM"],"FRANCE":["ROM"]}}"#,
            "owned twice",
        ),
        (
            r#"{"phase":"S1901M","units":{},"homes":{"ITALY":["PIE"]}}"#,
            "not a supply centre",
        ),
        (
            r#"{"phase":"S1901M","units":{},"orders":{"ITALY":"A ROM H"}}"#,
            "list of strings",
        ),
        (
            r#"{"phase":"S1901M","units":{},"orders":["A ROM H"]}"#,
            "must be an object",
        ),
        (r#"{"phase":"S1901M","units":[]}"#, "must be an object"),
    ];
    for (line, want) in cases {
        let e = error_of(line);
        assert!(e.contains(want), "{line}: got error {e:?}, wanted {want:?}");
    }
}

#[test]
fn invalid_utf8_line_gives_error_and_service_continues() {
    let mut input = b"\xff\xfe\n".to_vec();
    input.extend_from_slice(EX1_IN.as_bytes());
    let mut out = Vec::new();
    serve(&input[..], &mut out).expect("serve");
    let out = String::from_utf8(out).unwrap();
    assert_eq!(
        out,
        format!("{{\"error\":\"input line is not valid UTF-8\"}}\n{EX1_OUT}\n")
    );
}

#[test]
fn bad_orders_are_void_not_line_errors() {
    let line = r#"{"phase":"S1901M","units":{"FRANCE":["A PAR","F BRE"],"GERMANY":["A MUN"]},"orders":{"FRANCE":["A PAR - XYZ","A PAR - BUR","A PAR H","F BRE - PAR","A MUN H"],"GERMANY":["A MUN - BUR"]}}"#;
    let out = Service::new().line(line);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["results"]["A PAR"], "fails");
    assert_eq!(v["results"]["F BRE"], "void");
    assert_eq!(v["results"]["A MUN"], "fails");
    let errors: Vec<&str> = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    assert_eq!(
        errors,
        vec![
            "FRANCE: A PAR - XYZ: unknown province \"XYZ\"",
            "FRANCE: A PAR H: unit already has an order; the first legal order is kept",
            "FRANCE: F BRE - PAR: a fleet cannot move inland",
            "FRANCE: A MUN H: the unit belongs to GERMANY",
        ]
    );
}

#[test]
fn threaded_service_writes_the_same_bytes_in_input_order() {
    use kakehiki_diplomacy::service::{random_movement_lines, serve_with};
    let mut input = String::new();
    for (i, l) in random_movement_lines(700, 3).iter().enumerate() {
        input.push_str(l);
        input.push('\n');
        // Bad and blank lines in between, and a line without its LF at the very end.
        if i % 97 == 0 {
            input.push_str("not json\n\n   \n");
        }
    }
    input.push_str(EX3_IN);
    let one = run(&input);
    assert_eq!(one.lines().count(), 700 + 8 + 1);
    for threads in [2, 3, 8] {
        let mut out = Vec::new();
        serve_with(input.as_bytes(), &mut out, threads).expect("serve");
        assert!(
            String::from_utf8(out).expect("utf8") == one,
            "{threads} threads differ from one"
        );
    }
}

/// A caller that waits for each answer before sending its next line gets it: the service
/// flushes before it waits for more input, with one thread or several.
#[test]
fn an_interactive_caller_gets_each_answer_before_sending_the_next_line() {
    use kakehiki_diplomacy::service::serve_with;
    use std::io::{Read, Write};
    use std::sync::mpsc::{channel, Receiver, Sender};
    use std::time::Duration;

    struct In(Receiver<Vec<u8>>, Vec<u8>);
    impl Read for In {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.1.is_empty() {
                match self.0.recv() {
                    Ok(b) => self.1 = b,
                    Err(_) => return Ok(0),
                }
            }
            let n = buf.len().min(self.1.len());
            buf[..n].copy_from_slice(&self.1[..n]);
            self.1.drain(..n);
            Ok(n)
        }
    }
    struct Out(Sender<Vec<u8>>, Vec<u8>);
    impl Write for Out {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.1.extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            if !self.1.is_empty() {
                let _ = self.0.send(std::mem::take(&mut self.1));
            }
            Ok(())
        }
    }
    for threads in [1, 2] {
        let (in_tx, in_rx) = channel();
        let (out_tx, out_rx) = channel();
        let server = std::thread::spawn(move || {
            serve_with(In(in_rx, Vec::new()), Out(out_tx, Vec::new()), threads)
        });
        for (line, want) in [(EX1_IN, EX1_OUT), (EX3_IN, EX3_OUT), (EX1_IN, EX1_OUT)] {
            in_tx.send(format!("{line}\n").into_bytes()).unwrap();
            let got = out_rx
                .recv_timeout(Duration::from_secs(20))
                .expect("answer arrives before the next line is sent");
            assert_eq!(String::from_utf8(got).unwrap(), format!("{want}\n"));
        }
        drop(in_tx);
        server.join().unwrap().expect("serve");
    }
}
