//! Launch lines that cannot work in the sandbox, found before the bot starts: a program found in
//! `PATH` only in a folder the sandbox does not show (a version manager's shim), a script whose
//! interpreter is not shown, a folder a shell command changes to, classpath entries, and files
//! the bot's uid cannot read. Each problem names what is missing and the flag that adds it; the
//! same check runs in every pre-flight ([`crate::check_mounts`]) and when a bot is spawned.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::SYSTEM_DIRS;
use super::{Layer, PathMap, SandboxReport};
use crate::sandbox::SandboxConfig;
use crate::SpawnError;

/// Variables holding lists of folders a program loads code from.
const PATH_LISTS: &[&str] = &[
    "CLASSPATH",
    "PYTHONPATH",
    "NODE_PATH",
    "PERL5LIB",
    "RUBYLIB",
    "GEM_PATH",
    "LD_LIBRARY_PATH",
];

/// The `PATH` a confined bot gets: the system's program folders, which its private root shows
/// at these paths (`/usr`, `/bin`, `/sbin`), never the referee's own `PATH` (a host path such as
/// `/root/.pyenv/shims`). Folders of the referee's `PATH` that the bot is shown (in a system
/// folder, or by `--ro-path`, `--seat-dir`) follow them (`bot_path`).
pub const JAIL_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// What the bot sees of the host's file system: the system folders and `mounts`.
struct Visible<'a> {
    mounts: &'a [PathBuf],
    /// The bot's own paths, shown moved (`jail::paths`).
    map: &'a PathMap,
}

impl Visible<'_> {
    /// Whether `p` (absolute) is shown to the bot at the same path, following symbolic links.
    fn shows(&self, p: &Path) -> bool {
        let lexical = super::normalize(p);
        if !self.shows_lexically(&lexical) {
            return false;
        }
        match std::fs::canonicalize(&lexical) {
            Ok(real) => self.shows_lexically(&real),
            Err(_) => true,
        }
    }

    fn shows_lexically(&self, p: &Path) -> bool {
        // The jail's own /tmp, /dev and /proc exist, but hold nothing of the host's.
        ["/tmp", "/dev/shm"].iter().any(|d| p == Path::new(d))
            || ["/dev", "/proc"].iter().any(|d| p.starts_with(d))
            || SYSTEM_DIRS.iter().any(|d| p.starts_with(d))
            || self.mounts.iter().any(|m| p.starts_with(m))
    }
}

fn shown_list() -> String {
    "the system folders /usr, /bin, /lib, /etc and what the command line, --seat-dir and \
     --ro-path name"
        .to_string()
}

fn launch(problem: String) -> SpawnError {
    SpawnError::Launch(problem)
}

/// The value the bot gets for `var`: set by the referee, or passed through from the host.
fn bot_var(cfg: &SandboxConfig, var: &str) -> Option<String> {
    if let Some((_, v)) = cfg.env.iter().rev().find(|(k, _)| k == var) {
        return Some(v.clone());
    }
    if cfg.env_passthrough.iter().any(|k| k == var) {
        return std::env::var(var).ok();
    }
    None
}

/// The `PATH` a confined bot shown `mounts` (besides the system folders) gets: one the organiser
/// set (`env`) or passed on purpose (`--pass-env PATH`), else [`JAIL_PATH`] followed by the
/// folders of the referee's `PATH` the bot is shown at the same path (in a system folder, such
/// as `/usr/local/go/bin`, or in `mounts`).
/// Folders inside the bot's own paths are named where the bot sees them (`map`).
pub(crate) fn bot_path(cfg: &SandboxConfig, mounts: &[PathBuf], map: &PathMap) -> String {
    if let Some(v) = bot_var(cfg, "PATH") {
        return map.rewrite(&v);
    }
    jail_path(std::env::var_os("PATH").as_deref(), mounts, map)
}

/// [`JAIL_PATH`], then the folders of `host` (the referee's `PATH`) the bot is shown: in a system
/// folder or in `mounts`.
fn jail_path(host: Option<&std::ffi::OsStr>, mounts: &[PathBuf], map: &PathMap) -> String {
    let mut path = JAIL_PATH.to_string();
    if let Some(host) = host {
        for d in std::env::split_paths(host) {
            let d = super::normalize(&d);
            // Shown at the same path: inside a system folder (`/usr/local/go/bin`) or a mount.
            let shown = d.is_absolute()
                && (mounts.iter().any(|m| d.starts_with(m))
                    || SYSTEM_DIRS.iter().any(|s| d.starts_with(s)));
            let d = map.to_jail(&d);
            if shown && !path.split(':').any(|p| Path::new(p) == d) {
                if let Some(d) = d.to_str().filter(|d| !d.contains(':')) {
                    path.push(':');
                    path.push_str(d);
                }
            }
        }
    }
    path
}

fn is_executable_file(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The interpreter line of a script, if `p` is one: (`/usr/bin/env`, `bash`).
fn shebang(p: &Path) -> Option<(PathBuf, String)> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(p).ok()?.read(&mut head).ok()?;
    let head = &head[..n];
    let line = head.strip_prefix(b"#!")?;
    let line = &line[..line.iter().position(|&b| b == b'\n').unwrap_or(line.len())];
    let line = String::from_utf8_lossy(line);
    let mut parts = line.split_whitespace();
    let interp = PathBuf::from(parts.next()?);
    Some((interp, parts.collect::<Vec<_>>().join(" ")))
}

/// The system's own programs of that name or its `3` (`python` → `/usr/bin/python3`).
fn system_alternatives(name: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for n in [name.to_string(), format!("{name}3")] {
        for d in ["/usr/local/bin", "/usr/bin", "/bin"] {
            let p = Path::new(d).join(&n);
            if is_executable_file(&p)
                && !out.iter().any(|q: &PathBuf| q.file_name() == p.file_name())
            {
                out.push(p);
            }
        }
    }
    out
}

/// A program named without a folder: the sandbox looks it up in the bot's `PATH` inside its
/// private root. Found only outside it: say where it is on this machine and how to show it.
fn check_program_in_path(name: &str, cfg: &SandboxConfig, vis: &Visible) -> Result<(), SpawnError> {
    // Looked up on this machine: the host's names of the folders.
    let path = bot_path(cfg, vis.mounts, &PathMap::default());
    let mut host_hit = None;
    for d in path
        .split(':')
        .filter(|d| d.starts_with('/'))
        .map(Path::new)
    {
        let cand = d.join(name);
        if !is_executable_file(&cand) {
            continue;
        }
        if vis.shows(&cand) {
            return check_script(&cand, vis);
        }
        host_hit.get_or_insert(cand);
    }
    // Not in the bot's `PATH`: where the referee's own `PATH` finds it is the hint.
    if host_hit.is_none() {
        if let Some(host) = std::env::var_os("PATH") {
            host_hit = std::env::split_paths(&host)
                .filter(|d| d.is_absolute())
                .map(|d| d.join(name))
                .find(|c| is_executable_file(c));
        }
    }
    let Some(hit) = host_hit else {
        return Ok(());
    };
    let real = std::fs::canonicalize(&hit).unwrap_or_else(|_| hit.clone());
    let folder = if vis.shows_lexically(&super::normalize(&hit)) {
        real.parent().unwrap_or(&real).to_path_buf()
    } else {
        hit.parent().unwrap_or(&hit).to_path_buf()
    };
    // A `bin` folder's installation is what a program needs (`/opt/python/bin` → `/opt/python`).
    let flag_path = match folder.parent() {
        Some(prefix) if folder.file_name().is_some_and(|n| n == "bin") => prefix.to_path_buf(),
        _ => folder.clone(),
    };
    let mut msg = format!(
        "{name:?} is {} on this machine{}, but its folder {} is not visible inside the sandbox \
         (it shows only {}): add --ro-path {}",
        hit.display(),
        if real != hit {
            format!(" (a link to {})", real.display())
        } else {
            String::new()
        },
        folder.display(),
        shown_list(),
        flag_path.display()
    );
    if let Some((interp, arg)) = shebang(&real) {
        msg.push_str(&format!(
            "; it is a script run by {}{} (a version manager's shim starts programs from \
             outside the sandbox too: give the interpreter itself by its full path, whose \
             installation is then shown)",
            interp.display(),
            if arg.is_empty() {
                String::new()
            } else {
                format!(" {arg}")
            }
        ));
    }
    let alternatives = system_alternatives(name);
    if !alternatives.is_empty() {
        msg.push_str(&format!(
            ", or use the system's {}",
            alternatives
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(" or ")
        ));
    }
    Err(launch(msg))
}

/// A script whose interpreter (given by path on its `#!` line) the sandbox does not show.
fn check_script(program: &Path, vis: &Visible) -> Result<(), SpawnError> {
    let Some((interp, _)) = shebang(program) else {
        return Ok(());
    };
    if interp.is_absolute() && interp.exists() && vis.map.moves(&super::normalize(&interp)) {
        return Err(launch(format!(
            "{} is a script run by {}, inside the bot's own files, which the sandbox shows at \
             {} (no host path reaches a bot): start the script with `#!/usr/bin/env {}`, or name \
             the interpreter first in the command",
            program.display(),
            interp.display(),
            vis.map.to_jail(&super::normalize(&interp)).display(),
            interp
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        )));
    }
    if interp.is_absolute() && interp.exists() && !vis.shows(&interp) {
        let folder = interp.parent().unwrap_or(&interp);
        return Err(launch(format!(
            "{} is a script run by {}, whose folder {} is not visible inside the sandbox: add \
             --ro-path {}",
            program.display(),
            interp.display(),
            folder.display(),
            folder.display()
        )));
    }
    Ok(())
}

/// Folders a shell command names (`sh -c 'cd /abs/dir && ./a.out'`): an absolute one the
/// sandbox does not show, or a relative `cd` from a working folder that is the bot's empty
/// private `/tmp`.
fn check_shell_folders(
    argv: &[String],
    cfg: &SandboxConfig,
    vis: &Visible,
) -> Result<(), SpawnError> {
    for a in argv.iter().skip(1) {
        if !a.contains(char::is_whitespace) {
            continue;
        }
        let tokens: Vec<&str> = super::shell_words(a).collect();
        for (i, token) in tokens.iter().enumerate() {
            // Only the folder a `cd` (or `pushd`) enters: other paths may be what a command
            // only looks at.
            let after_cd = i > 0 && matches!(tokens[i - 1], "cd" | "pushd");
            if !after_cd {
                continue;
            }
            let p = super::normalize(Path::new(token));
            if token.starts_with('/') && p != Path::new("/") && p.is_dir() && !vis.shows(&p) {
                return Err(launch(format!(
                    "the command line names the folder {}, which is not visible inside the \
                     sandbox (it shows only {}): make it the seat's folder with --seat-dir \
                     N=DIR (it is then the bot's working folder: `./a.out`), or add --ro-path {}",
                    p.display(),
                    shown_list(),
                    p.display()
                )));
            }
            // A build (its working folder kept: `keep_files`) makes folders of its own and
            // enters them; only a bot's `cd` into a folder it was never given is a mistake.
            if !token.starts_with('/')
                && !matches!(*token, "." | ".." | "-")
                && cfg.jail.seat_dir.is_none()
                && cfg.keep_files.is_none()
            {
                if let Ok(cwd) = std::env::current_dir() {
                    let host = super::normalize(&cwd.join(token));
                    if host.is_dir() {
                        return Err(launch(format!(
                            "the command line changes to the folder {token:?}, relative to the \
                             bot's working folder, which in the sandbox is its own empty /tmp, not \
                             {}: make that folder the seat's with --seat-dir N={}",
                            cwd.display(),
                            host.display()
                        )));
                    }
                }
            }
        }
    }
    Ok(())
}

/// A list of folders (`CLASSPATH`, `-cp`) whose entries the sandbox does not show: the problem,
/// or `None`.
fn path_list_problem(
    what: &str,
    value: &str,
    cfg: &SandboxConfig,
    vis: &Visible,
) -> Option<String> {
    let cwd = std::env::current_dir().ok();
    let mut hidden = Vec::new();
    let mut relative = Vec::new();
    for entry in value.split(':').filter(|e| !e.is_empty()) {
        // A Java wildcard entry names its folder.
        let entry_path = entry.strip_suffix("/*").unwrap_or(entry);
        let p = Path::new(entry_path);
        if p.is_absolute() {
            if p.exists() && !vis.shows(p) {
                hidden.push(super::normalize(p));
            }
        } else if cfg.jail.seat_dir.is_none() {
            if let Some(cwd) = &cwd {
                if cwd.join(p).exists() {
                    relative.push(entry.to_string());
                }
            }
        }
    }
    if !hidden.is_empty() {
        let list: Vec<String> = hidden.iter().map(|p| p.display().to_string()).collect();
        let flags: Vec<String> = hidden
            .iter()
            .map(|p| format!("--ro-path {}", p.display()))
            .collect();
        return Some(format!(
            "{what} names {}, not visible inside the sandbox (it shows only {}): add {}",
            list.join(", "),
            shown_list(),
            flags.join(" ")
        ));
    }
    if !relative.is_empty() {
        return Some(format!(
            "{what} names {} relative to the bot's working folder, which in the sandbox is its \
             own empty /tmp: make the folder they are in the seat's with --seat-dir N=DIR, or \
             give absolute paths with --ro-path",
            relative.join(", ")
        ));
    }
    None
}

fn check_path_lists(argv: &[String], cfg: &SandboxConfig, vis: &Visible) -> Result<(), SpawnError> {
    for var in PATH_LISTS {
        let Some(value) = bot_var(cfg, var) else {
            continue;
        };
        // Passed on purpose (none is passed by default): a folder not shown is an error.
        if let Some(problem) = path_list_problem(&format!("{var}={value}"), &value, cfg, vis) {
            return Err(launch(problem));
        }
    }
    for pair in argv.windows(2) {
        if matches!(pair[0].as_str(), "-cp" | "-classpath" | "--class-path") {
            if let Some(problem) =
                path_list_problem(&format!("{} {}", pair[0], pair[1]), &pair[1], cfg, vis)
            {
                return Err(launch(problem));
            }
        }
    }
    // `java Main` with no class path looks in its working folder.
    let java = Path::new(&argv[0]).file_name().is_some_and(|n| n == "java");
    let has_cp = argv.iter().any(|a| {
        matches!(a.as_str(), "-cp" | "-classpath" | "--class-path" | "-jar")
            || a.starts_with("--class-path=")
    }) || bot_var(cfg, "CLASSPATH").is_some();
    if java && !has_cp && cfg.jail.seat_dir.is_none() {
        if let (Some(main), Ok(cwd)) = (
            argv.iter().skip(1).find(|a| !a.starts_with('-')),
            std::env::current_dir(),
        ) {
            let class = cwd.join(format!("{}.class", main.replace('.', "/")));
            if class.is_file() {
                return Err(launch(format!(
                    "java looks for {main} in its working folder, which in the sandbox is its \
                     own empty /tmp, not {}: make the folder of {} the seat's with --seat-dir \
                     N=DIR",
                    cwd.display(),
                    class.display()
                )));
            }
        }
    }
    Ok(())
}

/// Why uid `uid` (gid the same, no other groups) cannot use `p`: `need` is the access wanted
/// (4 read, 2 write, 1 execute/search).
fn denied_to(p: &Path, uid: u32, need: u32) -> Option<String> {
    let meta = std::fs::metadata(p).ok()?;
    let mode = meta.mode();
    let bits = if meta.uid() == uid {
        (mode >> 6) & 7
    } else if meta.gid() == uid {
        (mode >> 3) & 7
    } else {
        mode & 7
    };
    (bits & need != need).then(|| {
        format!(
            "{} (owner uid {}, mode {:04o})",
            p.display(),
            meta.uid(),
            mode & 0o7777
        )
    })
}

/// Files and folders shown to the bot that its uid cannot read (or run, or enter). `ancestors`:
/// without a mount namespace, the folders above them must be searchable too.
fn check_readable(
    argv: &[String],
    mounts: &[PathBuf],
    uid: u32,
    ancestors: bool,
) -> Result<(), SpawnError> {
    let mut wanted: Vec<(PathBuf, u32, &str)> = Vec::new();
    for m in mounts {
        let need = if m.is_dir() { 5 } else { 4 };
        wanted.push((m.clone(), need, "read"));
    }
    for (i, a) in argv.iter().enumerate() {
        let p = Path::new(a);
        if !p.is_absolute() || !p.exists() {
            continue;
        }
        if i == 0 && p.is_file() {
            let need = if shebang(p).is_some() { 5 } else { 1 };
            wanted.push((p.to_path_buf(), need, "run"));
        } else if p.is_dir() {
            wanted.push((p.to_path_buf(), 5, "read"));
        } else {
            wanted.push((p.to_path_buf(), 4, "read"));
        }
    }
    for (p, need, verb) in wanted {
        let mut chain = vec![(p.clone(), need)];
        if ancestors {
            chain.extend(p.ancestors().skip(1).map(|a| (a.to_path_buf(), 1)));
        }
        for (q, need) in chain {
            if let Some(why) = denied_to(&q, uid, need) {
                let what = if q.is_dir() {
                    "enter and read the folder"
                } else if need & 1 != 0 && need & 4 == 0 {
                    "run"
                } else {
                    verb
                };
                return Err(launch(format!(
                    "the bot runs as uid {uid}, which cannot {what} {why}: make it readable \
                     (chmod o+rX, or a+rx for a program) or move the bot to a folder others can \
                     read"
                )));
            }
        }
    }
    Ok(())
}

/// Every check of a launch line (`argv` resolved as for spawning) for a bot shown `mounts`
/// besides the system folders; `uid`: the uid it runs as, when that is not the referee's own.
pub(crate) fn check(
    argv: &[String],
    cfg: &SandboxConfig,
    mounts: &[PathBuf],
    map: &PathMap,
    report: &SandboxReport,
    uid: Option<u32>,
) -> Result<(), SpawnError> {
    let Some(program) = argv.first() else {
        return Ok(());
    };
    let namespaces = report.layers.contains(&Layer::Namespaces);
    if let Some(uid) = uid {
        check_readable(argv, mounts, uid, !namespaces)?;
    }
    // Without a private root or Landlock the bot sees what the referee sees.
    if !namespaces && !report.layers.contains(&Layer::LandlockFs) {
        return Ok(());
    }
    let vis = Visible { mounts, map };
    if !program.contains('/') {
        check_program_in_path(program, cfg, &vis)?;
    } else if Path::new(program).is_absolute() {
        check_script(Path::new(program), &vis)?;
    }
    check_shell_folders(argv, cfg, &vis)?;
    check_path_lists(argv, cfg, &vis)
}

/// The uid a bot runs as under `report` when it is not the referee's own (`uid` leased, or the
/// range's first when none is leased yet).
pub(crate) fn bot_uid(report: &SandboxReport, uid: u32) -> Option<u32> {
    (report.layers.contains(&Layer::Identity) && !report.user_namespace).then_some(uid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bot_path_holds_the_system_folders_and_only_the_shown_host_ones() {
        let host = std::ffi::OsStr::new(
            "/root/.cargo/bin:/root/.pyenv/shims:/opt/tool/bin:/usr/local/bin:/usr/bin:/bin",
        );
        let none = PathMap::default();
        assert_eq!(jail_path(Some(host), &[], &none), JAIL_PATH);
        // A toolchain's folder inside /usr is shown (a ladder recipe's `go build`).
        assert_eq!(
            jail_path(
                Some(std::ffi::OsStr::new("/usr/local/go/bin:/bin")),
                &[],
                &none
            ),
            format!("{JAIL_PATH}:/usr/local/go/bin")
        );
        assert_eq!(jail_path(None, &[], &none), JAIL_PATH);
        assert_eq!(
            jail_path(Some(host), &[PathBuf::from("/opt/tool")], &none),
            format!("{JAIL_PATH}:/opt/tool/bin")
        );
        // An explicit PATH is the organiser's.
        let mut cfg = SandboxConfig::default();
        cfg.env.push(("PATH".into(), "/x/bin".into()));
        assert_eq!(bot_path(&cfg, &[], &none), "/x/bin");
        // A folder among the bot's own paths is named where the bot sees it.
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("venv/bin")).unwrap();
        let venv = t.path().join("venv");
        let map = PathMap::new(None, std::slice::from_ref(&venv));
        let host = format!("{}:/bin", venv.join("bin").display());
        assert_eq!(
            jail_path(
                Some(std::ffi::OsStr::new(&host)),
                std::slice::from_ref(&venv),
                &map
            ),
            format!("{JAIL_PATH}:/bot/bin")
        );
        cfg.env[0].1 = host;
        assert_eq!(bot_path(&cfg, &[], &map), "/bot/bin:/bin");
    }
}
