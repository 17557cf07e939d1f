//! The hand-checked vectors V1–V15 of spec §8, run through the service (phase S1901M, the units
//! are exactly the ordered ones; results not listed are `succeeds`).

use kakehiki_diplomacy::service::Service;
use serde_json::{json, Map, Value};

struct V<'a> {
    orders: &'a [(&'a str, &'a [&'a str])],
    not_succeeding: &'a [(&'a str, &'a str)],
    moved: &'a [(&'a str, &'a str)],
    dislodged: &'a [(&'a str, &'a str, &'a [&'a str])],
    destroyed: &'a [&'a str],
}

fn check(name: &str, v: &V) {
    let mut units: Map<String, Value> = Map::new();
    let mut orders: Map<String, Value> = Map::new();
    let mut all_units = Vec::new();
    for (pw, os) in v.orders {
        for o in *os {
            let unit: String = o.split_whitespace().take(2).collect::<Vec<_>>().join(" ");
            units
                .entry(pw.to_string())
                .or_insert_with(|| json!([]))
                .as_array_mut()
                .unwrap()
                .push(json!(unit));
            orders
                .entry(pw.to_string())
                .or_insert_with(|| json!([]))
                .as_array_mut()
                .unwrap()
                .push(json!(o));
            all_units.push((pw.to_string(), unit));
        }
    }
    let line = json!({"phase": "S1901M", "units": units, "orders": orders}).to_string();
    let out: Value = serde_json::from_str(&Service::new().line(&line)).unwrap();
    assert_eq!(
        out["errors"].as_array().map(|a| a.len()),
        Some(v.not_succeeding.iter().filter(|r| r.1 == "void").count()),
        "{name}: {out}"
    );
    for (_, unit) in &all_units {
        let want = v
            .not_succeeding
            .iter()
            .find(|(u, _)| u == unit)
            .map(|(_, r)| *r)
            .unwrap_or("succeeds");
        assert_eq!(
            out["results"][unit], want,
            "{name}: result of {unit}: {out}"
        );
    }
    // Units after the phase: moved units at their destination, dislodged/destroyed ones gone.
    let mut expected: Vec<(String, String)> = Vec::new();
    for (pw, unit) in &all_units {
        if v.dislodged.iter().any(|(_, u, _)| u == unit) || v.destroyed.contains(&unit.as_str()) {
            continue;
        }
        let loc = &unit[2..];
        let to = v
            .moved
            .iter()
            .find(|(from, _)| *from == loc)
            .map(|(_, to)| *to)
            .unwrap_or(loc);
        expected.push((pw.clone(), format!("{} {to}", &unit[..1])));
    }
    expected.sort();
    let mut got = Vec::new();
    for (pw, us) in out["units"].as_object().unwrap() {
        for u in us.as_array().unwrap() {
            got.push((pw.clone(), u.as_str().unwrap().to_string()));
        }
    }
    got.sort();
    assert_eq!(got, expected, "{name}: units: {out}");
    let mut dis = Map::new();
    for (pw, unit, opts) in v.dislodged {
        dis.entry(pw.to_string())
            .or_insert_with(|| json!({}))
            .as_object_mut()
            .unwrap()
            .insert(unit.to_string(), json!(opts));
    }
    assert_eq!(
        out["dislodged"],
        Value::Object(dis),
        "{name}: dislodged: {out}"
    );
    assert_eq!(
        out["destroyed"],
        json!(v.destroyed),
        "{name}: destroyed: {out}"
    );
}

const V2: &[(&str, &[&str])] = &[
    ("AUSTRIA", &["A SER S A BUD - RUM", "A BUD - RUM"]),
    ("RUSSIA", &["A RUM - SER"]),
];
const V8: &[(&str, &[&str])] = &[
    ("FRANCE", &["A TUN - NAP", "F TYS C A TUN - NAP"]),
    ("ITALY", &["F NAP S F ROM - TYS", "F ROM - TYS"]),
];

#[test]
fn spec_vectors() {
    check(
        "V1",
        &V {
            orders: &[
                (
                    "GERMANY",
                    &["A RUH S A MUN - BUR", "A MUN - BUR", "A KIE - RUH"],
                ),
                ("FRANCE", &["A BUR H"]),
            ],
            not_succeeding: &[("A KIE", "fails"), ("A BUR", "fails")],
            moved: &[("MUN", "BUR")],
            dislodged: &[("FRANCE", "A BUR", &["BEL", "GAS", "MAR", "PAR", "PIC"])],
            destroyed: &[],
        },
    );
    check(
        "V2",
        &V {
            orders: V2,
            not_succeeding: &[("A RUM", "fails")],
            moved: &[("BUD", "RUM")],
            dislodged: &[("RUSSIA", "A RUM", &["BUL", "GAL", "SEV", "UKR"])],
            destroyed: &[],
        },
    );
    check(
        "V3",
        &V {
            orders: &[V2[0], ("RUSSIA", &["A RUM - SER", "A BUL S A RUM - SER"])],
            not_succeeding: &[("A SER", "fails")],
            moved: &[("RUM", "SER"), ("BUD", "RUM")],
            dislodged: &[("AUSTRIA", "A SER", &["ALB", "BUD", "GRE", "TRI"])],
            destroyed: &[],
        },
    );
    check(
        "V4",
        &V {
            orders: &[V2[0], V2[1], ("TURKEY", &["A BUL - SER"])],
            not_succeeding: &[
                ("A SER", "fails"),
                ("A BUD", "fails"),
                ("A RUM", "fails"),
                ("A BUL", "fails"),
            ],
            moved: &[],
            dislodged: &[],
            destroyed: &[],
        },
    );
    check(
        "V5",
        &V {
            orders: &[
                ("FRANCE", &["A BRE - PIC VIA", "F ENG C A BRE - PIC"]),
                ("GERMANY", &["A PIC S A PAR - BRE", "A PAR - BRE"]),
            ],
            not_succeeding: &[("A BRE", "fails")],
            moved: &[("PAR", "BRE")],
            dislodged: &[("FRANCE", "A BRE", &["GAS"])],
            destroyed: &[],
        },
    );
    check(
        "V6",
        &V {
            orders: &[
                ("ENGLAND", &["A LON - HOL", "F NTH C A LON - HOL"]),
                (
                    "GERMANY",
                    &["F HEL - NTH", "F DEN S F HEL - NTH", "A RUH - HOL"],
                ),
            ],
            not_succeeding: &[("A LON", "fails"), ("F NTH", "fails")],
            moved: &[("HEL", "NTH"), ("RUH", "HOL")],
            dislodged: &[(
                "ENGLAND",
                "F NTH",
                &["BEL", "EDI", "ENG", "NWG", "NWY", "SKA", "YOR"],
            )],
            destroyed: &[],
        },
    );
    check(
        "V7",
        &V {
            orders: &[
                (
                    "ENGLAND",
                    &["A LON - BEL", "F ENG C A LON - BEL", "F NTH C A LON - BEL"],
                ),
                ("FRANCE", &["F MAO - ENG", "F IRI S F MAO - ENG"]),
            ],
            not_succeeding: &[("F ENG", "fails")],
            moved: &[("LON", "BEL"), ("MAO", "ENG")],
            dislodged: &[("ENGLAND", "F ENG", &["BRE", "LON", "PIC", "WAL"])],
            destroyed: &[],
        },
    );
    check(
        "V8",
        &V {
            orders: V8,
            not_succeeding: &[("A TUN", "fails"), ("F TYS", "fails")],
            moved: &[("ROM", "TYS")],
            dislodged: &[("FRANCE", "F TYS", &["ION", "LYO", "TUS", "WES"])],
            destroyed: &[],
        },
    );
    check(
        "V9",
        &V {
            orders: &[
                (
                    "FRANCE",
                    &[
                        "A TUN - NAP",
                        "F TYS C A TUN - NAP",
                        "F ION C A TUN - NAP",
                        "F APU S A TUN - NAP",
                    ],
                ),
                V8[1],
            ],
            not_succeeding: &[("F NAP", "fails"), ("F ROM", "fails")],
            moved: &[("TUN", "NAP")],
            dislodged: &[],
            destroyed: &["F NAP"],
        },
    );
    check(
        "V10",
        &V {
            orders: &[
                (
                    "GERMANY",
                    &[
                        "A HOL - BEL VIA",
                        "F NTH C A HOL - BEL",
                        "A RUH S A HOL - BEL",
                    ],
                ),
                ("FRANCE", &["A BEL H"]),
            ],
            not_succeeding: &[("A BEL", "fails")],
            moved: &[("HOL", "BEL")],
            dislodged: &[("FRANCE", "A BEL", &["BUR", "HOL", "PIC"])],
            destroyed: &[],
        },
    );
    check(
        "V11",
        &V {
            orders: &[
                ("FRANCE", &["A BUR H"]),
                ("GERMANY", &["A MUN - BUR", "A RUH S A MUN - BUR"]),
                ("ITALY", &["A MAR - BUR", "A GAS S A MAR - BUR"]),
            ],
            not_succeeding: &[("A MUN", "fails"), ("A MAR", "fails")],
            moved: &[],
            dislodged: &[],
            destroyed: &[],
        },
    );
    check(
        "V12",
        &V {
            orders: &[
                (
                    "GERMANY",
                    &["A MUN - BUR", "A RUH S A MUN - BUR", "A HOL - BEL"],
                ),
                ("FRANCE", &["A BUR - MUN"]),
                ("ENGLAND", &["A PIC - BEL"]),
            ],
            not_succeeding: &[("A BUR", "fails"), ("A HOL", "fails"), ("A PIC", "fails")],
            moved: &[("MUN", "BUR")],
            dislodged: &[("FRANCE", "A BUR", &["GAS", "MAR", "PAR"])],
            destroyed: &[],
        },
    );
    check(
        "V13",
        &V {
            orders: &[
                (
                    "FRANCE",
                    &[
                        "F GAS - SPA",
                        "F MAO S F GAS - SPA/NC",
                        "F POR S F GAS - SPA/SC",
                    ],
                ),
                ("ITALY", &["F WES - SPA/SC", "F LYO S F WES - SPA/SC"]),
            ],
            not_succeeding: &[("F GAS", "fails"), ("F WES", "fails"), ("F POR", "void")],
            moved: &[],
            dislodged: &[],
            destroyed: &[],
        },
    );
    check(
        "V14",
        &V {
            orders: &[
                ("FRANCE", &["A BUR H", "A PAR S A MUN - BUR"]),
                ("GERMANY", &["A MUN - BUR"]),
                ("ITALY", &["A MAR - BUR", "A GAS S A MAR - BUR"]),
            ],
            not_succeeding: &[("A MUN", "fails"), ("A MAR", "fails")],
            moved: &[],
            dislodged: &[],
            destroyed: &[],
        },
    );
    check(
        "V15",
        &V {
            orders: &[("TURKEY", &["F ANK - CON", "A CON - SMY", "A SMY - ANK"])],
            not_succeeding: &[],
            moved: &[("ANK", "CON"), ("CON", "SMY"), ("SMY", "ANK")],
            dislodged: &[],
            destroyed: &[],
        },
    );
}
