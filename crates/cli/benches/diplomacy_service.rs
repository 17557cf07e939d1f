//! `kakehiki diplomacy adjudicate` end to end, the way a user meets it: the release binary run on
//! a file of random movement phases (stdin from the file, stdout to a file), process start
//! included, for 1,000 and 10,000 phases. Prints phases per second (best of several runs) and
//! checks the output: one line per input line, in input order.
//!
//! With `KAKEHIKI_MILA_PYTHON` set to the Python of a virtual environment holding MILA (the PyPI
//! package `diplomacy`, AGPL, installed outside this repository and never linked or shipped), it
//! also times MILA's `Game.process()` on the same phases (process() only, a comparison in MILA's
//! favour), best of `KAKEHIKI_MILA_RUNS` runs (default 3) spread among ours, as ours is best of
//! its runs, and prints the ratio of the two bests. Our median is printed too (a shared machine's speed drifts from
//! run to run).
//!
//! `cargo bench -p kakehiki --bench diplomacy_service`
//! `KAKEHIKI_MILA_PYTHON=/work/ext/mila-venv/bin/python cargo bench -p kakehiki --bench diplomacy_service`
//! Options (environment): `KAKEHIKI_BENCH_RUNS` (runs per size, default 7),
//! `KAKEHIKI_BENCH_THREADS` (passed as `--threads`; default: the binary's own choice),
//! `KAKEHIKI_MILA_RUNS` (runs of MILA per size, default 3),
//! `KAKEHIKI_BENCH_DIR` (write the phase files there and keep them).

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn run_binary(input: &Path, output: &Path, threads: Option<&str>) -> Duration {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kakehiki"));
    cmd.args(["diplomacy", "adjudicate"]);
    if let Some(t) = threads {
        cmd.args(["--threads", t]);
    }
    let start = Instant::now();
    let status = cmd
        .stdin(File::open(input).expect("input file"))
        .stdout(File::create(output).expect("output file"))
        .stderr(Stdio::inherit())
        .status()
        .expect("run kakehiki");
    let t = start.elapsed();
    assert!(status.success(), "kakehiki diplomacy adjudicate failed");
    t
}

/// Every input line has its output line, in order, and none is an error.
fn check_output(lines: &[String], output: &Path) {
    let out = BufReader::new(File::open(output).expect("output"));
    let mut n = 0;
    for (i, l) in out.lines().enumerate() {
        let l = l.expect("utf-8 output");
        let v: serde_json::Value = serde_json::from_str(&l).expect("output line is JSON");
        let want: serde_json::Value = serde_json::from_str(&lines[i]).expect("input is JSON");
        assert_eq!(v["phase"], want["phase"], "line {i} out of order");
        assert!(v.get("error").is_none(), "line {i}: {l}");
        n += 1;
    }
    assert_eq!(n, lines.len(), "one output line per input line");
}

fn mila_seconds(python: &str, input: &Path) -> Option<(usize, f64)> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/mila_process.py");
    let out = Command::new(python)
        .arg(&script)
        .arg(input)
        .stderr(Stdio::inherit())
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!("MILA comparison failed ({})", out.status);
        return None;
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    Some((v["phases"].as_u64()? as usize, v["seconds"].as_f64()?))
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is not used.
    let runs: usize = std::env::var("KAKEHIKI_BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(7);
    let threads = std::env::var("KAKEHIKI_BENCH_THREADS").ok();
    let mila = std::env::var("KAKEHIKI_MILA_PYTHON").ok();
    let mila_runs: usize = std::env::var("KAKEHIKI_MILA_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let dir = tempfile::tempdir().expect("temporary directory");
    // `KAKEHIKI_BENCH_DIR`: keep the generated files there (to profile the binary on them).
    let keep = std::env::var_os("KAKEHIKI_BENCH_DIR").map(std::path::PathBuf::from);
    let files = keep.as_deref().unwrap_or(dir.path());
    for n in [1_000usize, 10_000] {
        let lines = kakehiki_diplomacy::service::random_movement_lines(n, 1);
        let input = files.join(format!("phases-{n}.jsonl"));
        let output = files.join(format!("out-{n}.jsonl"));
        let mut f = File::create(&input).expect("input file");
        for l in &lines {
            writeln!(f, "{l}").expect("write input");
        }
        drop(f);
        // With MILA, its runs are spread among ours (a round of ours, then one of MILA's), so
        // that both meet the machine in the same moods.
        let rounds = if mila.is_some() { mila_runs.max(1) } else { 1 };
        let mut times: Vec<Duration> = Vec::new();
        let mut best_mila: Option<(usize, f64)> = None;
        for round in 0..rounds {
            let share = runs.max(1) / rounds + usize::from(round < runs.max(1) % rounds);
            for _ in 0..share.max(1) {
                times.push(run_binary(&input, &output, threads.as_deref()));
            }
            if let Some(py) = &mila {
                if let Some((m, secs)) = mila_seconds(py, &input) {
                    if best_mila.is_none_or(|(_, b)| secs < b) {
                        best_mila = Some((m, secs));
                    }
                }
            }
        }
        times.sort();
        let best = times[0];
        let median = times[times.len() / 2];
        check_output(&lines, &output);
        let ours = n as f64 / best.as_secs_f64();
        println!(
            "diplomacy adjudicate, {n} random movement phases: {:.2} ms end to end (best of {}; median {:.2} ms), {ours:.0} phases/s",
            best.as_secs_f64() * 1e3,
            times.len(),
            median.as_secs_f64() * 1e3
        );
        if let Some((m, secs)) = best_mila {
            let theirs = m as f64 / secs;
            println!(
                "  MILA process(), same {m} phases: {:.0} ms (best of {rounds}), {theirs:.0} phases/s; kakehiki/MILA = {:.0}x",
                secs * 1e3,
                ours / theirs
            );
        }
    }
}
