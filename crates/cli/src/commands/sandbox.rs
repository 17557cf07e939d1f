//! `kakehiki sandbox`: the confinement layers process bots run under on this machine.

use clap::Args;
use kakehiki_agent::{JailConfig, Layer, SandboxLevel, SandboxReport};

use crate::exit;

#[derive(Args, Debug)]
pub struct SandboxArgs {
    /// The level to report on (as `play --sandbox`); with `strict` the exit status is 1 when a
    /// layer is missing.
    #[arg(long, default_value = "best")]
    pub level: SandboxLevel,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Report on this CPU quota per bot (as `play --cpus-per-bot`); an error where it cannot
    /// be applied.
    #[arg(long, value_name = "CPUS", value_parser = kakehiki_agent::parse_cpus, allow_negative_numbers = true)]
    pub cpus_per_bot: Option<u32>,
}

fn describe(layer: Layer) -> &'static str {
    match layer {
        Layer::Identity => "own uid/gid per bot, no groups, no capabilities, no new privileges",
        Layer::Namespaces => {
            "PID, mount (private root, /proc, /tmp, /dev/shm), IPC, UTS; network: an empty one \
             of its own for each pipe bot, a launched client's own with only its seat's listener"
        }
        Layer::LandlockFs => "file-system allow-list",
        Layer::LandlockNet => "TCP: connect to the seat's own port only, bind nothing",
        Layer::LandlockScope => "no signals or abstract sockets beyond the bot's own domain",
        Layer::Cgroup => {
            "memory and process limits over all the bot's processes, killed at the end"
        }
        Layer::Cpu => "the same CPU share for every bot, however many processes it runs",
        Layer::Seccomp => {
            "no ptrace, process_vm_*, bpf, perf, mount, namespaces, keyrings, modules; sockets: \
             Unix, TCP and route netlink only (no MPTCP, UDP, raw, vsock), no TCP Fast Open; no \
             file locks, inotify, dnotify or fanotify; without namespaces also no listen, SysV \
             or POSIX IPC"
        }
    }
}

pub fn run(args: SandboxArgs) -> anyhow::Result<u8> {
    let jail = JailConfig {
        level: args.level,
        cpu_millis: args.cpus_per_bot,
        ..JailConfig::default()
    };
    let report = SandboxReport::for_jail(&jail);
    let quota = report.check_cpu_quota(&jail);
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!("sandbox level: {}", report.level);
        for layer in Layer::ALL {
            match report.missing.iter().find(|m| m.layer == layer) {
                None => println!("  on       {:<15} {}", layer.name(), describe(layer)),
                Some(m) => println!("  MISSING  {:<15} {}", layer.name(), m.reason),
            }
        }
        println!(
            "landlock ABI {}, cgroup {}",
            report.landlock_abi,
            report.cgroup.unwrap_or("none")
        );
        match &report.cpu {
            Some(cpu) => println!(
                "cpu: equal {} per bot{}",
                if cpu.control == "weight" {
                    "cpu.weight"
                } else {
                    "cpu.shares"
                },
                match (cpu.quota_us, cpu.period_us) {
                    (Some(q), Some(p)) =>
                        format!(", quota {q} us per {p} us ({} CPUs)", q as f64 / p as f64),
                    _ => ", no quota (--cpus-per-bot)".to_string(),
                }
            ),
            None => println!(
                "cpu: not shared fairly: a bot with many processes gets more CPU than the others"
            ),
        }
        let uncovered = report.uncovered();
        if !uncovered.is_empty() {
            println!("what this tier does not cover:");
            for gap in uncovered {
                println!("  - {gap}");
            }
        }
        if report.user_namespace {
            println!(
                "not root: identity and namespaces come from a user namespace \
                 (the bot's uid inside maps to this user's outside)"
            );
            let caps = kakehiki_agent::jail::capabilities();
            println!(
                "not root: each bot's process count is kept in its own user namespace \
                 (--max-processes, Linux 5.14+); all bots together count against this user's {}",
                match caps.nproc_limit {
                    Some(n) => format!("RLIMIT_NPROC of {n} (its hard limit)"),
                    None => "unlimited RLIMIT_NPROC".to_string(),
                }
            );
        }
    }
    quota?;
    if args.level == SandboxLevel::Strict && !report.complete() {
        return Ok(exit::FAILURE);
    }
    Ok(exit::OK)
}
