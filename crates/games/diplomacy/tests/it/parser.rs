//! Order parser: every syntax form and alias of spec §2.1–2.2, and malformed input.

use kakehiki_diplomacy::order::{parse_location, parse_unit};
use kakehiki_diplomacy::{parse_order, standard, Dest, Order, ParseError, UnitKind, UnitRef};

fn p(name: &str) -> u8 {
    standard().province(name).unwrap()
}
fn l(name: &str) -> u8 {
    standard().location(name).unwrap()
}
fn u(kind: Option<UnitKind>, prov: &str) -> UnitRef {
    UnitRef {
        kind,
        prov: p(prov),
        coast: None,
    }
}
fn a(prov: &str) -> UnitRef {
    u(Some(UnitKind::Army), prov)
}
fn f(prov: &str) -> UnitRef {
    u(Some(UnitKind::Fleet), prov)
}
fn fc(loc: &str) -> UnitRef {
    UnitRef {
        kind: Some(UnitKind::Fleet),
        prov: standard().prov_of(l(loc)),
        coast: Some(l(loc)),
    }
}
fn d(prov: &str) -> Dest {
    Dest {
        prov: p(prov),
        coast: None,
    }
}
fn dc(loc: &str) -> Dest {
    Dest {
        prov: standard().prov_of(l(loc)),
        coast: Some(l(loc)),
    }
}
fn parse(s: &str) -> Order {
    parse_order(standard(), s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
}
fn fails(s: &str) -> ParseError {
    parse_order(standard(), s).expect_err(s)
}

#[test]
fn canonical_forms() {
    assert_eq!(parse("A PAR H"), Order::Hold(a("PAR")));
    assert_eq!(
        parse("A PAR - BUR"),
        Order::Move {
            unit: a("PAR"),
            dest: d("BUR"),
            via: false
        }
    );
    assert_eq!(
        parse("F MAO - SPA/NC"),
        Order::Move {
            unit: f("MAO"),
            dest: dc("SPA/NC"),
            via: false
        }
    );
    assert_eq!(
        parse("A LON - NWY VIA"),
        Order::Move {
            unit: a("LON"),
            dest: d("NWY"),
            via: true
        }
    );
    assert_eq!(
        parse("F BRE S A PAR"),
        Order::SupportHold {
            unit: f("BRE"),
            target: a("PAR")
        }
    );
    assert_eq!(
        parse("A MAR S A PAR - BUR"),
        Order::SupportMove {
            unit: a("MAR"),
            target: a("PAR"),
            dest: d("BUR")
        }
    );
    assert_eq!(
        parse("F POR S F MAO - SPA/NC"),
        Order::SupportMove {
            unit: f("POR"),
            target: f("MAO"),
            dest: dc("SPA/NC")
        }
    );
    assert_eq!(
        parse("F NTH C A LON - NWY"),
        Order::Convoy {
            unit: f("NTH"),
            army: a("LON"),
            dest: p("NWY")
        }
    );
    assert_eq!(
        parse("F TRI R ALB"),
        Order::Retreat {
            unit: f("TRI"),
            dest: d("ALB")
        }
    );
    assert_eq!(parse("F TRI D"), Order::Disband(f("TRI")));
    assert_eq!(parse("A PAR B"), Order::Build(a("PAR")));
    assert_eq!(parse("F STP/NC B"), Order::Build(fc("STP/NC")));
    assert_eq!(parse("A PAR D"), Order::Disband(a("PAR")));
    assert_eq!(parse("WAIVE"), Order::Waive);
}

#[test]
fn normalisation_case_blanks_dashes_arrows() {
    let m = Order::Move {
        unit: a("PAR"),
        dest: d("BUR"),
        via: false,
    };
    for s in [
        "a par-bur",
        "A  PAR   -   BUR",
        "a par->bur",
        "A PAR -> BUR",
        "\tA PAR - BUR  ",
        "a PaR-BuR",
    ] {
        assert_eq!(parse(s), m, "{s:?}");
    }
}

#[test]
fn keyword_aliases() {
    for s in ["A PAR HOLD", "A PAR HOLDS", "a par h"] {
        assert_eq!(parse(s), Order::Hold(a("PAR")), "{s}");
    }
    for s in [
        "F BRE SUPPORT A PAR",
        "F BRE SUPPORTS A PAR",
        "F BRE S A PAR H",
        "F BRE S A PAR HOLD",
    ] {
        assert_eq!(
            parse(s),
            Order::SupportHold {
                unit: f("BRE"),
                target: a("PAR")
            },
            "{s}"
        );
    }
    for s in ["F NTH CONVOY A LON - NWY", "F NTH CONVOYS A LON - NWY"] {
        assert_eq!(
            parse(s),
            Order::Convoy {
                unit: f("NTH"),
                army: a("LON"),
                dest: p("NWY")
            },
            "{s}"
        );
    }
    for s in [
        "A LON - NWY VIA CONVOY",
        "A LON - NWY BY CONVOY",
        "a lon-nwy via convoy",
    ] {
        assert_eq!(
            parse(s),
            Order::Move {
                unit: a("LON"),
                dest: d("NWY"),
                via: true
            },
            "{s}"
        );
    }
    for s in ["F TRI RETREAT ALB", "F TRI RETREATS ALB", "F TRI R - ALB"] {
        assert_eq!(
            parse(s),
            Order::Retreat {
                unit: f("TRI"),
                dest: d("ALB")
            },
            "{s}"
        );
    }
    for s in [
        "F TRI DISBAND",
        "F TRI DISBANDS",
        "F TRI REMOVE",
        "DISBAND F TRI",
        "REMOVE F TRI",
    ] {
        assert_eq!(parse(s), Order::Disband(f("TRI")), "{s}");
    }
    assert_eq!(parse("REMOVE PAR"), Order::Disband(u(None, "PAR")));
    for s in ["A PAR BUILD", "A PAR BUILDS", "BUILD A PAR", "build a par"] {
        assert_eq!(parse(s), Order::Build(a("PAR")), "{s}");
    }
    assert_eq!(
        parse("BUILD STP/NC"),
        Order::Build(UnitRef {
            kind: None,
            prov: p("STP"),
            coast: Some(l("STP/NC"))
        })
    );
}

#[test]
fn province_aliases() {
    for (alias, canon) in [
        ("ECH", "ENG"),
        ("EME", "EAS"),
        ("GOB", "BOT"),
        ("GOL", "LYO"),
        ("MID", "MAO"),
        ("NAT", "NAO"),
        ("NOR", "NWY"),
        ("NRG", "NWG"),
        ("TYN", "TYS"),
    ] {
        assert_eq!(
            parse(&format!("F {alias} H")),
            Order::Hold(f(canon)),
            "{alias}"
        );
        assert_eq!(
            parse(&format!("f {} h", alias.to_lowercase())),
            Order::Hold(f(canon)),
            "{alias}"
        );
    }
}

#[test]
fn coast_spellings() {
    let m = Order::Move {
        unit: f("MAO"),
        dest: dc("SPA/NC"),
        via: false,
    };
    for s in [
        "F MAO - SPA/NC",
        "F MAO - SPA(NC)",
        "F MAO - SPA (NC)",
        "F MAO - SPA NC",
        "F MAO - (SPA NCS)",
        "f mao - spa/nc",
    ] {
        assert_eq!(parse(s), m, "{s}");
    }
    assert_eq!(parse("F STP/SC H"), Order::Hold(fc("STP/SC")));
    assert_eq!(parse("F (BUL ECS) H"), Order::Hold(fc("BUL/EC")));
    // A coast the province does not have is ignored (4.B.6).
    assert_eq!(
        parse("F NTH - BEL/NC"),
        Order::Move {
            unit: f("NTH"),
            dest: d("BEL"),
            via: false
        }
    );
    assert_eq!(
        parse("F MAO - SPA/EC"),
        Order::Move {
            unit: f("MAO"),
            dest: d("SPA"),
            via: false
        }
    );
    // A suffix that is not a coast word is a syntax error.
    assert_eq!(fails("F MAO - SPA/XC"), ParseError::BadCoast("XC".into()));
    assert_eq!(fails("F MAO - SPA(QQ)"), ParseError::BadCoast("QQ".into()));
}

#[test]
fn missing_or_wrong_letters_and_convoy_paths() {
    assert_eq!(
        parse("PAR - BUR"),
        Order::Move {
            unit: u(None, "PAR"),
            dest: d("BUR"),
            via: false
        }
    );
    assert_eq!(
        parse("F PAR - BUR"),
        Order::Move {
            unit: f("PAR"),
            dest: d("BUR"),
            via: false
        }
    );
    assert_eq!(
        parse("A MAR S PAR - BUR"),
        Order::SupportMove {
            unit: a("MAR"),
            target: u(None, "PAR"),
            dest: d("BUR")
        }
    );
    assert_eq!(
        parse("F NTH C LON - NWY"),
        Order::Convoy {
            unit: f("NTH"),
            army: u(None, "LON"),
            dest: p("NWY")
        }
    );
    assert_eq!(
        parse("ARMY PAR - BUR"),
        Order::Move {
            unit: a("PAR"),
            dest: d("BUR"),
            via: false
        }
    );
    // A convoy path is dropped (4.A.6), no VIA implied.
    assert_eq!(
        parse("A LON - NTH - BEL"),
        Order::Move {
            unit: a("LON"),
            dest: d("BEL"),
            via: false
        }
    );
    assert_eq!(
        parse("A LON-NTH-ENG-BRE VIA"),
        Order::Move {
            unit: a("LON"),
            dest: d("BRE"),
            via: true
        }
    );
}

#[test]
fn malformed_input_names_what_was_expected() {
    assert_eq!(fails(""), ParseError::Empty);
    assert_eq!(fails("   "), ParseError::Empty);
    assert_eq!(
        fails("A PAR - XYZ"),
        ParseError::UnknownProvince("XYZ".into())
    );
    assert_eq!(
        fails("A PARIS - BUR"),
        ParseError::UnknownProvince("PARIS".into())
    );
    assert_eq!(fails("A PAR ; BUR"), ParseError::BadChar(';'));
    assert!(matches!(
        fails("A PAR"),
        ParseError::Expected { pos: 3, .. }
    ));
    assert!(matches!(
        fails("A PAR X BUR"),
        ParseError::Expected { pos: 3, .. }
    ));
    assert!(matches!(
        fails("A PAR - BUR H"),
        ParseError::Expected { pos: 5, .. }
    ));
    assert!(matches!(
        fails("A PAR -"),
        ParseError::Expected { pos: 4, .. }
    ));
    assert!(matches!(
        fails("F NTH C A LON"),
        ParseError::Expected { .. }
    ));
    assert!(matches!(
        fails("A LON - NWY BY"),
        ParseError::Expected { .. }
    ));
    assert!(matches!(fails("F MAO - SPA/"), ParseError::Expected { .. }));
    assert!(matches!(
        fails("F MAO - (SPA NC"),
        ParseError::Expected { .. }
    ));
    assert!(matches!(fails("WAIVE A PAR"), ParseError::Expected { .. }));
    // Nationality words are not part of the syntax (4.C.5, 4.C.6).
    assert!(fails("A MAR S FRENCH A PAR - BUR")
        .to_string()
        .contains("FRENCH"));
    let e = fails("A PAR - BUR H").to_string();
    assert_eq!(e, "expected end of order at word 5, found \"H\"");
    // Never panics on arbitrary text.
    for s in [
        "-",
        "()",
        "(",
        ")",
        "/",
        "S",
        "A",
        "A -",
        "- - -",
        "F (",
        "F STP/",
        "→",
        "A PAR S",
        "A PAR C A",
    ] {
        let _ = parse_order(standard(), s);
    }
}

#[test]
fn units_and_locations() {
    let m = standard();
    assert_eq!(parse_unit(m, "f stp(sc)").unwrap(), fc("STP/SC"));
    assert_eq!(parse_unit(m, "A nrg").unwrap(), a("NWG"));
    assert!(parse_unit(m, "PAR").is_err());
    assert!(parse_unit(m, "A PAR H").is_err());
    assert_eq!(parse_location(m, "spa/sc").unwrap(), dc("SPA/SC"));
    assert!(parse_location(m, "").is_err());
}
