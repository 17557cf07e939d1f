//! `kakehiki sandbox`: the confinement layers process bots run under on this machine.

use clap::Args;
use kakehiki_agent::{Layer, SandboxLevel, SandboxReport};

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
}

fn describe(layer: Layer) -> &'static str {
    match layer {
        Layer::Identity => "own uid/gid per bot, no groups, no capabilities, no new privileges",
        Layer::Namespaces => {
            "PID, mount (private root, /proc, /tmp, /dev/shm), IPC, UTS; network: none for \
             pipe bots, a launched client's own with only its seat's listener"
        }
        Layer::LandlockFs => "file-system allow-list",
        Layer::LandlockNet => "TCP: connect to the seat's own port only, bind nothing",
        Layer::LandlockScope => "no signals or abstract sockets beyond the bot's own domain",
        Layer::Cgroup => {
            "memory and process limits over all the bot's processes, killed at the end"
        }
        Layer::Seccomp => {
            "no ptrace, process_vm_*, bpf, perf, mount, namespaces, keyrings, modules; sockets: \
             Unix, TCP and route netlink only (no MPTCP, UDP, raw, vsock), no TCP Fast Open"
        }
    }
}

pub fn run(args: SandboxArgs) -> anyhow::Result<u8> {
    let report = SandboxReport::current(args.level);
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
        if report.user_namespace {
            println!(
                "not root: identity and namespaces come from a user namespace \
                 (the bot's uid inside maps to this user's outside)"
            );
        }
    }
    if args.level == SandboxLevel::Strict && !report.complete() {
        return Ok(exit::FAILURE);
    }
    Ok(exit::OK)
}
