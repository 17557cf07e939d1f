//! Werewolf, natural-language division: whole 13-player games of built-in template agents in
//! process (`sample` and `random`, Japanese and English).
//!
//! `cargo bench -p kakehiki-werewolf --bench nlp_games`

use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use kakehiki_werewolf::nlp::inproc::play_builtin;
use kakehiki_werewolf::nlp::NlpSettings;

fn bench(c: &mut Criterion) {
    let s = Arc::new(NlpSettings::defaults(13).expect("13 players"));
    let bots: Vec<&str> = (0..13)
        .map(|i| ["sample", "sample-en", "random", "random-en"][i % 4])
        .collect();
    let mut seed = 0;
    c.bench_function("werewolf_nlp_inprocess_game_13", |b| {
        b.iter(|| {
            seed += 1;
            play_builtin(s.clone(), seed, &bots).expect("known bots").0
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
