//! The DATC harness: every block of every case file in `data/datc/` (minus the `SKIP` list) must
//! pass. The order of files follows the DATC README: v2.4 file, then v3 additions, then overrides;
//! further `*.txt` files dropped into the folder are run too.

use kakehiki_diplomacy::datc::{parse_cases, run_case};
use kakehiki_diplomacy::{standard, Resolver};
use std::path::PathBuf;

fn datc_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/datc")
}

fn skip_list() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(datc_dir().join("SKIP")).expect("SKIP file");
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (f, c) = l.split_once(char::is_whitespace).expect("<file> <case>");
            (f.to_string(), c.trim().to_string())
        })
        .collect()
}

pub fn case_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(datc_dir())
        .expect("datc dir")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    files
}

#[test]
fn datc_suite_passes() {
    let map = standard();
    let mut resolver = Resolver::new();
    let skip = skip_list();
    let mut failures = Vec::new();
    let mut ran = 0;
    let mut skipped = 0;
    for file in case_files() {
        let fname = file.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&file).expect("read case file");
        let cases = parse_cases(&text).unwrap_or_else(|e| panic!("{fname}: {e}"));
        for case in &cases {
            if skip.iter().any(|(f, c)| *f == fname && *c == case.name) {
                skipped += 1;
                continue;
            }
            ran += 1;
            if let Err(e) = run_case(map, &mut resolver, case) {
                failures.push(format!("{fname}:{} CASE {}: {e}", case.line, case.name));
            }
        }
    }
    assert_eq!(
        skipped, 1,
        "the SKIP list names exactly 6.G.8 of the v2.4 file"
    );
    assert_eq!(ran, 167 - 1 + 6 + 15, "every block of the three files runs");
    assert!(
        failures.is_empty(),
        "{} DATC failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The harness can fail: the v2.4 block 6.G.8 expects the land fallback that v3.1 dropped.
#[test]
fn v24_block_6g8_is_rejected_under_v31_rules() {
    let map = standard();
    let text = std::fs::read_to_string(datc_dir().join("datc_v2.4_06.txt")).expect("read");
    let cases = parse_cases(&text).expect("parse");
    let case = cases
        .iter()
        .find(|c| c.name == "6.G.8")
        .expect("6.G.8 present");
    let err = run_case(map, &mut Resolver::new(), case).expect_err("v3.1 differs from v2.4 here");
    assert!(
        err.contains("got [\"ENGLAND A KIE\", \"ENGLAND F HEL\", \"FRANCE A BEL\"]"),
        "{err}"
    );
}

/// Every case converted into a service line (§5) gives the same answer as the library.
#[test]
fn datc_suite_through_the_service() {
    use kakehiki_diplomacy::datc::{build_board, order_items, parse_unit_item};
    use kakehiki_diplomacy::service::Service;
    use kakehiki_diplomacy::{Board, PhaseKind};
    use serde_json::{json, Map, Value};
    let map = standard();
    let skip = skip_list();
    let mut svc = Service::new();
    let mut failures = Vec::new();
    let mut ran = 0;
    for file in case_files() {
        let fname = file.file_name().unwrap().to_string_lossy().to_string();
        let cases = parse_cases(&std::fs::read_to_string(&file).unwrap()).unwrap();
        for case in cases
            .iter()
            .filter(|c| !skip.iter().any(|(f, n)| *f == fname && *n == c.name))
        {
            ran += 1;
            let board = build_board(map, case).unwrap();
            let mut units: Map<String, Value> = Map::new();
            let mut dislodged: Map<String, Value> = Map::new();
            let mut centers: Map<String, Value> = Map::new();
            for u in board.units.iter().flatten() {
                units
                    .entry(u.power.name())
                    .or_insert_with(|| json!([]))
                    .as_array_mut()
                    .unwrap()
                    .push(json!(map.unit_name(u)));
            }
            for d in board.dislodged.iter().flatten() {
                dislodged
                    .entry(d.unit.power.name())
                    .or_insert_with(|| json!({}))
                    .as_object_mut()
                    .unwrap()
                    .insert(
                        map.unit_name(&d.unit),
                        json!(Board::option_names(map, d.options)),
                    );
            }
            for (p, o) in board.owner.iter().enumerate() {
                if let Some(o) = o {
                    centers
                        .entry(o.name())
                        .or_insert_with(|| json!([]))
                        .as_array_mut()
                        .unwrap()
                        .push(json!(map.prov_name(p as u8)));
                }
            }
            let mut orders: Map<String, Value> = Map::new();
            for (pw, text) in order_items(case).unwrap() {
                orders
                    .entry(pw.name())
                    .or_insert_with(|| json!([]))
                    .as_array_mut()
                    .unwrap()
                    .push(json!(text));
            }
            let mut line = json!({"phase": board.phase.to_string(), "units": units, "centers": centers, "orders": orders});
            if board.phase.kind == PhaseKind::Retreat {
                line["dislodged"] = Value::Object(dislodged);
            }
            let out: Value = serde_json::from_str(&svc.line(&line.to_string())).unwrap();
            if out.get("error").is_some() {
                failures.push(format!("{}: {}", case.name, out));
                continue;
            }
            let mut got: Vec<String> = Vec::new();
            for (pw, us) in out["units"].as_object().unwrap() {
                for u in us.as_array().unwrap() {
                    got.push(format!("{pw} {}", u.as_str().unwrap()));
                }
            }
            got.sort();
            let mut got_d: Vec<String> = Vec::new();
            for (pw, us) in out["dislodged"].as_object().unwrap() {
                for u in us.as_object().unwrap().keys() {
                    got_d.push(format!("{pw} {u}"));
                }
            }
            got_d.sort();
            let fmt = |items: &[String]| -> Vec<String> {
                let mut v: Vec<String> = items
                    .iter()
                    .map(|i| {
                        let u = parse_unit_item(map, i).unwrap();
                        format!("{} {}", u.power, map.unit_name(&u))
                    })
                    .collect();
                v.sort();
                v
            };
            let expected = match &case.poststate {
                Some(items) => fmt(items),
                None => {
                    let mut v: Vec<String> = board
                        .units
                        .iter()
                        .flatten()
                        .map(|u| format!("{} {}", u.power, map.unit_name(u)))
                        .collect();
                    v.sort();
                    v
                }
            };
            if got != expected || got_d != fmt(&case.post_dislodged) {
                failures.push(format!(
                    "{}: got {got:?} / {got_d:?}, expected {expected:?}",
                    case.name
                ));
            }
        }
    }
    assert_eq!(ran, 187);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
