//! Error messages as the user reads them: the chain of causes, each said once.

/// `error` and its causes joined with ": ", leaving out a cause whose text the message before
/// it already contains (library errors often include their source in their own message, and
/// the chain would repeat it: "cannot open x: No such file (os error 2): No such file (os error
/// 2)").
pub fn render(error: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in error.chain() {
        let text = cause.to_string();
        let text = text.trim();
        if text.is_empty() || parts.iter().any(|p| p.contains(text)) {
            continue;
        }
        parts.push(text.to_string());
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error that, like many library errors, shows its source in its own message.
    #[derive(Debug)]
    struct Open {
        path: String,
        source: std::io::Error,
    }

    impl std::fmt::Display for Open {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(
                f,
                "cannot open sqlite database {}: {}",
                self.path, self.source
            )
        }
    }

    impl std::error::Error for Open {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.source)
        }
    }

    #[test]
    fn each_cause_is_said_once() {
        let io = std::io::Error::from_raw_os_error(2);
        let e = anyhow::Error::new(Open {
            path: "x.sqlite".into(),
            source: io,
        })
        .context("cannot read the store x.sqlite");
        let text = render(&e);
        assert_eq!(
            text.matches("No such file or directory").count(),
            1,
            "{text}"
        );
        assert!(
            text.starts_with("cannot read the store x.sqlite: cannot open sqlite database x.sqlite: No such file"),
            "{text}"
        );
        // Causes not repeated by their parent are kept.
        let plain = anyhow::anyhow!("inner").context("outer");
        assert_eq!(render(&plain), "outer: inner");
    }
}
