//! Error messages as the user reads them: the chain of causes, each said once.

/// `error` and its causes joined with ": ", each said once
/// ([`kakehiki_core::text::error_chain`]).
pub fn render(error: &anyhow::Error) -> String {
    kakehiki_core::text::error_chain(error.as_ref())
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
