//! `kakehiki diplomacy adjudicate` end to end: the spec's example 1 byte for byte, a bad line, a
//! blank line, exit code 0 at end of input.

use std::io::Write;
use std::process::Stdio;

use crate::support::kakehiki;

const EX1_IN: &str = r#"{"phase":"S1901M","units":{"AUSTRIA":["A BUD","A VIE","F TRI"],"ENGLAND":["A LVP","F EDI","F LON"],"FRANCE":["A MAR","A PAR","F BRE"],"GERMANY":["A BER","A MUN","F KIE"],"ITALY":["A ROM","A VEN","F NAP"],"RUSSIA":["A MOS","A WAR","F SEV","F STP/SC"],"TURKEY":["A CON","A SMY","F ANK"]},"orders":{"ENGLAND":["f edi -> nrg"],"FRANCE":["A PAR - BUR"],"GERMANY":["A MUN - BUR"]}}"#;
const EX1_OUT: &str = r#"{"phase":"S1901M","next_phase":"F1901M","results":{"A MUN":"fails","A PAR":"fails","F EDI":"succeeds"},"units":{"AUSTRIA":["A BUD","A VIE","F TRI"],"ENGLAND":["A LVP","F LON","F NWG"],"FRANCE":["A MAR","A PAR","F BRE"],"GERMANY":["A BER","A MUN","F KIE"],"ITALY":["A ROM","A VEN","F NAP"],"RUSSIA":["A MOS","A WAR","F SEV","F STP/SC"],"TURKEY":["A CON","A SMY","F ANK"]},"dislodged":{},"destroyed":[],"centers":{"AUSTRIA":["BUD","TRI","VIE"],"ENGLAND":["EDI","LON","LVP"],"FRANCE":["BRE","MAR","PAR"],"GERMANY":["BER","KIE","MUN"],"ITALY":["NAP","ROM","VEN"],"RUSSIA":["MOS","SEV","STP","WAR"],"TURKEY":["ANK","CON","SMY"]},"errors":[]}"#;

#[test]
fn adjudicate_service_end_to_end() {
    let mut child = kakehiki()
        .args(["diplomacy", "adjudicate"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn kakehiki");
    {
        let mut stdin = child.stdin.take().unwrap();
        write!(stdin, "{EX1_IN}\n\n{{\"phase\":1}}\n{EX1_IN}\n").unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        stdout,
        format!("{EX1_OUT}\n{{\"error\":\"phase must be a string\"}}\n{EX1_OUT}\n")
    );
}

/// A caller that waits for each answer before sending the next line gets it, with one
/// adjudicating thread or several.
#[test]
fn adjudicate_answers_each_line_before_the_next_arrives() {
    use std::io::{BufRead, BufReader};
    for threads in ["1", "2"] {
        let mut child = kakehiki()
            .args(["diplomacy", "adjudicate", "--threads", threads])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn kakehiki");
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        for _ in 0..3 {
            writeln!(stdin, "{EX1_IN}").unwrap();
            stdin.flush().unwrap();
            let mut line = String::new();
            stdout.read_line(&mut line).unwrap();
            assert_eq!(line, format!("{EX1_OUT}\n"), "{threads} threads");
        }
        drop(stdin);
        assert_eq!(child.wait().unwrap().code(), Some(0));
    }
}

#[test]
fn adjudicate_rejects_zero_threads() {
    let out = kakehiki()
        .args(["diplomacy", "adjudicate", "--threads", "0"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("threads"));
}
