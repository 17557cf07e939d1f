//! The web UI on a contest of 200 entrants being stored: scores as decimals with the exact value
//! on hover, paginated index, standings and match lists, head-to-head per entrant, and pages
//! that follow new results read incrementally, with standings equal to the batch computation.
//! Runs on SQLite, and on PostgreSQL when KAKEHIKI_TEST_DATABASE_URL is set.

use std::collections::BTreeMap;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use kakehiki_contest::{compute_standings, load_results, ContestDef, OutputFormat};
use kakehiki_core::{MatchReport, Outcome, Score};
use kakehiki_store::{NewResult, PgStore, SqliteStore, Store};
use serde_json::Value;
use tower::ServiceExt;

fn def(name: &str, entrants: usize) -> ContestDef {
    let mut toml = format!(
        "name = \"{name}\"\ngame = \"nac\"\nformat = \"random-tables\"\nseats = 4\nmin_games = 4\nseed = 3\n"
    );
    for i in 0..entrants {
        toml.push_str(&format!(
            "[[entrants]]\nname = \"bot{i:03}\"\nseat = \"builtin:random\"\n"
        ));
    }
    let lookup = |g: &str| {
        kakehiki_referee::find_game(g)
            .map(|d| d.game_type())
            .map_err(|e| e.to_string())
    };
    ContestDef::parse(&toml, "scale.toml", &lookup).unwrap()
}

/// Store matches `range` of the contest's schedule with made-up reports; match 0 has the
/// scores 15022/3, -155/2, 0 and 1.
fn store_matches(store: &mut dyn Store, def: &ContestDef, range: std::ops::Range<usize>) {
    let plan = kakehiki_contest::schedule(def, &BTreeMap::new());
    for m in &plan.matches[range] {
        let i = m.index as i64;
        let scores = if m.index == 0 {
            vec![
                Score::new(15022, 3),
                Score::new(-155, 2),
                Score::from_integer(0),
                Score::from_integer(1),
            ]
        } else {
            (0..4)
                .map(|s| Score::new((i * 7 + s * 13) % 11 - 5, 2))
                .collect()
        };
        let names: Vec<String> = m
            .entrants
            .iter()
            .map(|&e| def.entrants[e].name.clone())
            .collect();
        let seats = names.iter().map(|n| (n.clone(), vec![])).collect();
        let report = MatchReport::new("nac", "nac", m.seed, &Outcome::by_max(scores), seats);
        let report = serde_json::to_string(&report).unwrap();
        store
            .put_result(&NewResult {
                contest: &def.name,
                index: m.index,
                entrants: &names,
                report_json: &report,
                replay: "{\"event\":\"header\"}\n",
                duration_ms: 1,
                worker: "test",
            })
            .unwrap();
    }
}

/// A page, with the escaped slashes of attribute values read as a browser reads them.
fn get(rt: &tokio::runtime::Runtime, app: &axum::Router, uri: &str) -> (StatusCode, String) {
    rt.block_on(async {
        let response = app
            .clone()
            .oneshot(Request::builder().uri(uri).body(Body::empty()).unwrap())
            .await
            .unwrap();
        let status = response.status();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let text = String::from_utf8(bytes.to_vec()).unwrap();
        (status, text.replace("&#x2f;", "/"))
    })
}

fn count(page: &str, needle: &str) -> usize {
    page.matches(needle).count()
}

/// The part of `page` from `start` to the next `end`.
fn section<'a>(page: &'a str, start: &str, end: &str) -> &'a str {
    let from = page
        .find(start)
        .unwrap_or_else(|| panic!("no {start} in {page}"));
    let rest = &page[from..];
    &rest[..rest.find(end).unwrap_or(rest.len())]
}

fn two_hundred_entrants(open: impl Fn() -> Box<dyn Store> + Send + Sync + 'static) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let d = def("big", 200);
    let mut writer = open();
    kakehiki_contest::register(writer.as_mut(), &d).unwrap();
    for extra in ["aaa", "zzz"] {
        kakehiki_contest::register(writer.as_mut(), &def(extra, 4)).unwrap();
    }
    store_matches(writer.as_mut(), &d, 0..120);
    let plan = kakehiki_contest::schedule(&d, &BTreeMap::new());
    let app = kakehiki_web::app_with_opener(std::sync::Arc::new(move || Ok(open())), 4).unwrap();

    // Scores: two decimals, the exact value on hover.
    let (status, page) = get(&rt, &app, "/contests/big");
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(
        page.contains("<span class=\"score\" title=\"15022/3\">5007.33</span>"),
        "{page}"
    );
    assert!(page.contains("title=\"-155/2\">-77.50<"), "{page}");
    assert!(!page.contains(">15022/3<"), "{page}");
    let (_, m0) = get(&rt, &app, "/contests/big/matches/0");
    assert!(m0.contains("title=\"15022/3\">5007.33<"), "{m0}");
    // ...and exact in the JSON API.
    let (_, api) = get(&rt, &app, "/api/contests/big/matches/0");
    assert!(api.contains("\"15022/3\""), "{api}");

    // Standings: 50 rows a page, with links to the next pages.
    let standings = section(&page, "id=\"standings\"", "</table>");
    assert_eq!(count(standings, "/entrants/"), 50, "{standings}");
    assert!(page.contains("standings: page 1 of 4"), "{page}");
    assert!(page.contains("href=\"/contests/big?spage=2\""), "{page}");
    let (_, last) = get(&rt, &app, "/contests/big?spage=4");
    let rows = section(&last, "id=\"standings\"", "</table>");
    assert_eq!(count(rows, "/entrants/"), 50);
    assert!(
        !rows.contains(section(standings, "/entrants/", "\"")),
        "{rows}"
    );
    let (_, small) = get(&rt, &app, "/contests/big?spage=3&sper=70");
    assert_eq!(
        count(
            section(&small, "id=\"standings\"", "</table>"),
            "/entrants/"
        ),
        60
    );
    assert!(
        small.contains("href=\"/contests/big?spage=2&amp;sper=70\""),
        "{small}"
    );
    // Matches: `per` a page.
    let (_, few) = get(&rt, &app, "/contests/big?per=7&page=2");
    let table = section(&few, "class=\"matches\"", "</table>");
    assert_eq!(count(table, "/matches/"), 7, "{table}");
    assert!(few.contains("matches: page 2 of 18 (120 in all)"), "{few}");
    for bad in [
        "/contests/big?per=0",
        "/contests/big?sper=100000",
        "/contests/big?spage=x",
        "/?per=-1",
    ] {
        let (status, body) = get(&rt, &app, bad);
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
    }

    // Head to head: no 200 × 200 matrix; each entrant's page has its row.
    assert!(!page.contains("id=\"h2h\""));
    assert!(page.contains("id=\"h2h-per-entrant\""), "{page}");
    assert!(page.len() < 400_000, "contest page of {} bytes", page.len());
    let first = &plan.matches[0];
    let (status, ep) = get(
        &rt,
        &app,
        &format!("/contests/big/entrants/bot{:03}", first.entrants[0]),
    );
    assert_eq!(status, StatusCode::OK);
    let row = section(&ep, "id=\"h2h-row\"", "</table>");
    for &o in &first.entrants[1..] {
        assert!(row.contains(&format!(">bot{o:03}</a>")), "{row}");
    }
    assert!(row.contains("<td class=\"num\">1</td>"), "{row}");

    // The index: paginated too.
    let (_, index) = get(&rt, &app, "/?per=2");
    assert!(
        index.contains(">aaa</a>") && index.contains(">big</a>") && !index.contains(">zzz</a>"),
        "{index}"
    );
    assert!(index.contains("href=\"/?page=2&amp;per=2\""), "{index}");
    let planned = plan.matches.len();
    assert!(planned >= 200, "{planned}");
    assert!(index.contains(&format!("120 / {planned}")), "{index}");

    // New results are picked up, and the standings equal the batch computation.
    store_matches(writer.as_mut(), &d, 120..200);
    let (_, index) = get(&rt, &app, "/");
    assert!(index.contains(&format!("200 / {planned}")), "{index}");
    // Pages are served from memory at once while a refresher reads the new results.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let web: Value = loop {
        let (status, api) = get(&rt, &app, "/api/contests/big/standings");
        assert_eq!(status, StatusCode::OK);
        let web: Value = serde_json::from_str(&api).unwrap();
        if web["matches_stored"] == 200 || std::time::Instant::now() > deadline {
            break web;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let batch = compute_standings(&d, &load_results(writer.as_mut(), &d).unwrap());
    let batch: Value = serde_json::from_str(&batch.render(OutputFormat::Json)).unwrap();
    assert_eq!(web, batch);
    let (_, page) = get(&rt, &app, "/contests/big");
    assert!(
        page.contains(&format!("200 of {planned} matches stored")),
        "{page}"
    );
}

#[test]
fn two_hundred_entrants_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.sqlite");
    two_hundred_entrants(move || Box::new(SqliteStore::open(&path).unwrap()));
}

#[test]
fn two_hundred_entrants_on_postgres() {
    let url = match std::env::var("KAKEHIKI_TEST_DATABASE_URL") {
        Ok(url) if !url.is_empty() => url,
        _ => {
            eprintln!("SKIPPED: needs KAKEHIKI_TEST_DATABASE_URL (source .ci/postgres.sh)");
            return;
        }
    };
    let schema = format!("t_webscale_{}", std::process::id());
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    client
        .batch_execute(&format!(
            "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
        ))
        .unwrap();
    let sep = if url.contains('?') { '&' } else { '?' };
    let url = format!("{url}{sep}options=-c%20search_path%3D{schema}");
    two_hundred_entrants(move || Box::new(PgStore::connect(&url).unwrap()));
}
