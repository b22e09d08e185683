//! Where pushes go and with what: [`NtfyConfig`] (the topic URL, split into the server and
//! the topic, the access token, titles only), the checks of the operator's topic URL and
//! token, and [`NtfyError`], which never shows either.

use url::Url;

/// Longest topic name ntfy accepts.
pub const MAX_TOPIC_CHARS: usize = 64;

/// Why the ntfy publisher cannot be set up, or why a push failed.
///
/// None of these messages shows the topic or the token: the topic is the password of an
/// ntfy topic, and these messages end up in logs.
#[derive(Debug, thiserror::Error)]
pub enum NtfyError {
    /// The topic URL the operator gave cannot be published to.
    #[error("the ntfy topic URL {0}")]
    TopicUrl(String),
    /// The access token cannot be sent in an `Authorization` header.
    #[error("the ntfy access token {0}")]
    Token(&'static str),
    /// The publisher's thread could not be started.
    #[error("cannot start the ntfy publisher thread: {0}")]
    Spawn(#[source] std::io::Error),
    /// The server could not be reached, or did not answer in time.
    #[error("cannot reach the ntfy server {server}: {source}")]
    Unreachable {
        server: String,
        #[source]
        source: Box<ureq::Error>,
    },
    /// The server answered, but did not take the message.
    #[error("the ntfy server {server} refused the message: HTTP {status}{detail}")]
    Refused {
        server: String,
        status: u16,
        /// ntfy's own word for it (`: unauthorized`), when it gave one.
        detail: String,
    },
}

/// Where and how to publish.
#[derive(Clone)]
pub struct NtfyConfig {
    /// The topic URL the operator set, e.g. `https://ntfy.sh/my-secret-topic` or
    /// `http://127.0.0.1:8080/inbox`: the server is everything before the last path segment
    /// (scheme, host, port and any path prefix), the topic is that last segment. Checked by
    /// [`NtfyConfig::parse`] and again by [`NtfyPublisher::start`](super::NtfyPublisher::start).
    pub topic_url: Url,
    /// An ntfy access token (`tk_...`), sent as `Authorization: Bearer <token>`.
    pub token: Option<String>,
    /// Send titles only: no source, no question text leaves the machine.
    pub titles_only: bool,
}

impl std::fmt::Debug for NtfyConfig {
    /// Without the token, which must never reach a log.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NtfyConfig")
            .field("topic_url", &self.topic_url.as_str())
            .field("token", &self.token.as_ref().map(|_| "<hidden>"))
            .field("titles_only", &self.titles_only)
            .finish()
    }
}

impl NtfyConfig {
    /// Reads the operator's settings. The URL must be `http` or `https`, without a user
    /// name, password, query or fragment, and end in a topic of 1 to 64 letters, digits,
    /// `-` or `_` (ntfy's own rule; one trailing `/` is allowed). A blank token is no token
    /// (an environment variable set to nothing); any other must be printable ASCII without
    /// spaces.
    pub fn parse(
        topic_url: &str,
        token: Option<String>,
        titles_only: bool,
    ) -> Result<NtfyConfig, NtfyError> {
        let topic_url = Url::parse(topic_url.trim())
            .map_err(|error| NtfyError::TopicUrl(format!("is not a URL ({error})")))?;
        let token = token
            .map(|token| token.trim().to_owned())
            .filter(|token| !token.is_empty());
        let config = NtfyConfig {
            topic_url,
            token,
            titles_only,
        };
        config.check()?;
        Ok(config)
    }

    /// Checks the topic URL and the token as [`NtfyConfig::parse`] does (the fields are
    /// public, so the publisher checks again before it starts).
    pub fn check(&self) -> Result<(), NtfyError> {
        check_topic_url(&self.topic_url)?;
        if let Some(token) = &self.token {
            check_token(token)?;
        }
        Ok(())
    }

    /// The topic: the URL's last path segment.
    pub fn topic(&self) -> &str {
        split_topic_url(&self.topic_url).1
    }

    /// The server's root URL, to which ntfy takes messages published as JSON (not the topic
    /// URL): scheme, host, port and any path prefix, ending in `/`.
    pub fn server_url(&self) -> Url {
        split_topic_url(&self.topic_url).0
    }
}

/// The server root and the topic of a topic URL, unchecked: the last non-empty path segment
/// is the topic, everything before it the server.
fn split_topic_url(topic_url: &Url) -> (Url, &str) {
    let segments: Vec<&str> = topic_url
        .path_segments()
        .map(|segments| segments.collect())
        .unwrap_or_default();
    // One trailing slash (`https://ntfy.sh/topic/`) leaves an empty last segment.
    let segments = match segments.split_last() {
        Some((&"", rest)) => rest,
        _ => &segments[..],
    };
    let (topic, prefix) = segments.split_last().unwrap_or((&"", &[]));
    let mut server = topic_url.clone();
    server.set_query(None);
    server.set_fragment(None);
    let path: String = prefix.iter().map(|segment| format!("{segment}/")).collect();
    server.set_path(&format!("/{path}"));
    (server, topic)
}

fn check_topic_url(topic_url: &Url) -> Result<(), NtfyError> {
    let problem = |problem: &str| Err(NtfyError::TopicUrl(problem.to_owned()));
    match topic_url.scheme() {
        "http" | "https" => {}
        other => {
            return Err(NtfyError::TopicUrl(format!(
                "must start with http:// or https://, not {other}:"
            )))
        }
    }
    if topic_url.host().is_none() {
        return problem("names no server");
    }
    if !topic_url.username().is_empty() || topic_url.password().is_some() {
        return problem(
            "must not carry a user name or password: give an access token instead \
             (it is sent as a bearer token)",
        );
    }
    if topic_url.query().is_some() || topic_url.fragment().is_some() {
        return problem("must not have a query (?...) or a fragment (#...)");
    }
    let topic = split_topic_url(topic_url).1;
    if topic.is_empty() {
        return problem("names no topic: it must end in one, as in https://ntfy.sh/your-topic");
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    if topic.chars().count() > MAX_TOPIC_CHARS || !topic.chars().all(allowed) {
        return problem(
            "must end in a topic of 1 to 64 letters, digits, '-' or '_' (ntfy's rule for \
             topic names)",
        );
    }
    Ok(())
}

fn check_token(token: &str) -> Result<(), NtfyError> {
    if token.is_empty() {
        return Err(NtfyError::Token("is empty"));
    }
    if !token.chars().all(|c| c.is_ascii_graphic()) {
        return Err(NtfyError::Token(
            "must be printable ASCII without spaces (ntfy tokens look like tk_...)",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_topic_url_splits_into_server_and_topic() {
        let cases = [
            (
                "https://ntfy.sh/my-secret_topic1",
                "https://ntfy.sh/",
                "my-secret_topic1",
            ),
            (
                "http://127.0.0.1:8080/inbox",
                "http://127.0.0.1:8080/",
                "inbox",
            ),
            (
                "  https://example.com/ntfy/alerts/ ",
                "https://example.com/ntfy/",
                "alerts",
            ),
        ];
        for (url, server, topic) in cases {
            let config = NtfyConfig::parse(url, None, false).unwrap();
            assert_eq!(config.server_url().as_str(), server, "{url}");
            assert_eq!(config.topic(), topic, "{url}");
        }
    }

    #[test]
    fn a_bad_topic_url_or_token_is_refused_naming_the_problem() {
        let long = format!("https://ntfy.sh/{}", "a".repeat(65));
        let cases = [
            ("ntfy.sh/topic", "is not a URL"),
            ("ftp://ntfy.sh/topic", "http:// or https://, not ftp:"),
            ("https://ntfy.sh/", "names no topic"),
            ("https://ntfy.sh", "names no topic"),
            ("https://ntfy.sh/my%20topic", "1 to 64 letters"),
            ("https://ntfy.sh/top.ic", "1 to 64 letters"),
            (long.as_str(), "1 to 64 letters"),
            ("https://phil:secret@ntfy.sh/topic", "user name or password"),
            ("https://ntfy.sh/topic?auth=x", "query"),
            ("https://ntfy.sh/topic#x", "fragment"),
        ];
        for (url, problem) in cases {
            let error = NtfyConfig::parse(url, None, false).unwrap_err().to_string();
            assert!(error.contains(problem), "{url}: {error}");
        }
        // Exactly 64 characters is ntfy's limit, and allowed.
        let at_limit = format!("https://ntfy.sh/{}", "a".repeat(64));
        assert!(NtfyConfig::parse(&at_limit, None, false).is_ok());

        let token = |token: &str| NtfyConfig::parse("https://ntfy.sh/t", Some(token.into()), false);
        assert_eq!(token("  ").unwrap().token, None);
        assert_eq!(token(" tk_abc ").unwrap().token.as_deref(), Some("tk_abc"));
        for bad in ["s3cret abc", "s3cret\r\nX-Evil: 1", "s3cré"] {
            let error = token(bad).unwrap_err().to_string();
            assert!(error.contains("printable ASCII"), "{bad:?}: {error}");
            assert!(!error.contains("s3cr"), "the token leaked: {error}");
        }
        // Nor does the configuration show it.
        let debug = format!("{:?}", token("tk_secret").unwrap());
        assert!(
            !debug.contains("tk_secret") && debug.contains("<hidden>"),
            "{debug}"
        );
    }
}
