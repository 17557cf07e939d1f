//! Store overhead per stored match (result plus replay) on SQLite, file-backed, WAL.
//!
//!   cargo bench -p kakehiki-store --bench store
//!
//! One iteration stores one new match: the report JSON and a ~5 KB JSON-lines replay (zstd
//! compression included), in its own transaction. Target: <= 1 ms at the median.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use kakehiki_store::{ContestRow, NewResult, SqliteStore, Store};

fn replay_text() -> String {
    let mut text = String::from(
        "{\"event\":\"header\",\"format\":\"kakehiki/nac-replay@1\",\"engine\":\"0.1.0\",\"game\":\"nac\",\"rules\":\"nac\",\"seed\":12345,\"seats\":[\"builtin:strong\",\"builtin:random\",\"cmd:python3 bot.py\",\"builtin:random\"],\"params\":{\"turns\":9,\"targets\":6}}\n",
    );
    for turn in 1..=9 {
        for seat in 0..4 {
            text.push_str(&format!(
                "{{\"event\":\"reply\",\"turn\":{turn},\"seat\":{seat},\"line\":\"{} {} {} {} {}\",\"ms\":{},\"picks\":[{},{},{},{},{}]}}\n",
                turn % 6, seat, (turn + seat) % 6, 3, 5, 17 + turn * seat, turn % 6, seat, (turn + seat) % 6, 3, 5
            ));
        }
        text.push_str(&format!("{{\"event\":\"turn\",\"turn\":{turn},\"real\":[[1,2,3,4],[5,6,7,8],[1,2,3,4],[5,6,7,8],[1,2,3,4],[5,6,7,8]],\"public\":[[1,2,3,4],[5,6,7,8],[1,2,3,4],[5,6,7,8],[1,2,3,4],[5,6,7,8]]}}\n"));
    }
    text
}

const REPORT: &str = r#"{"game":"nac","rules":"nac","seed":12345,"scores":[7.5,-3.0,1.0,-5.5],"scores_exact":["15/2","-3","1","-11/2"],"winner":0,"seats":[{"spec":"builtin:strong","errors":[]},{"spec":"builtin:random","errors":[]},{"spec":"cmd:python3 bot.py","errors":[{"turn":3,"kind":"timeout","detail":"no reply within 1000 ms"}]},{"spec":"builtin:random","errors":[]}],"weights":[3,4,5,6,3,4]}"#;

fn bench_put_result(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut store = SqliteStore::open(&dir.path().join("bench.sqlite")).expect("open store");
    store
        .register_contest(&ContestRow {
            name: "bench".into(),
            fingerprint: "f".into(),
            definition: "{}".into(),
        })
        .expect("register");
    let replay = replay_text();
    let entrants: Vec<String> = ["a", "b", "c", "d"].iter().map(|s| s.to_string()).collect();
    let mut index = 0u64;
    let mut group = c.benchmark_group("sqlite");
    group.throughput(Throughput::Elements(1));
    group.bench_function(format!("put_result ({} byte replay)", replay.len()), |b| {
        b.iter(|| {
            index += 1;
            let inserted = store
                .put_result(&NewResult {
                    contest: "bench",
                    index,
                    entrants: &entrants,
                    report_json: REPORT,
                    replay: &replay,
                    duration_ms: 12,
                    worker: "bench",
                })
                .expect("store");
            assert!(inserted);
        })
    });
    group.finish();
}

criterion_group!(benches, bench_put_result);
criterion_main!(benches);
