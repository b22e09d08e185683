//! The server's self-signed certificate: made on first start, kept in the state directory,
//! and shown to the operator by its SHA-256 fingerprint, which they compare with what the
//! browser shows before trusting it.
//!
//! The pair is kept, never silently replaced: a new certificate would be a new fingerprint
//! every paired browser warns about. A file that does not parse is therefore an error naming
//! it, for the operator to look at or remove.

use std::fs::DirBuilder;
use std::net::IpAddr;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{Datelike as _, Days, NaiveDate, Utc};
use inbox_engine::inbox_policy::capped_read;
use rcgen::{
    CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, KeyPair,
    KeyUsagePurpose, SanType,
};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::sign::CertifiedKey;
use sha2::{Digest as _, Sha256};

/// The certificate's file in the state directory.
pub const CERT_FILE: &str = "serve-cert.pem";
/// Its private key's file.
pub const KEY_FILE: &str = "serve-key.pem";

/// How long a new certificate is valid: about ten years, so that it never expires under a
/// browser that was told to trust it.
const VALID_DAYS: u64 = 3650;

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A file of the pair could not be read, written or parsed.
    #[error("{}: {problem}", path.display())]
    File { path: PathBuf, problem: String },
    /// The key file holds a valid key, but not the one the certificate was made for.
    #[error(
        "the key in {} does not belong to the certificate in {}; remove both files to make a \
         new pair (paired browsers will then warn about the new certificate)",
        key.display(),
        cert.display()
    )]
    Mismatch { cert: PathBuf, key: PathBuf },
    #[error("cannot make a self-signed certificate: {0}")]
    Make(String),
    #[error("cannot set up TLS with the certificate: {0}")]
    Config(String),
}

/// A certificate and its key, both PEM, and the fingerprint a browser shows for it.
#[derive(Clone)]
pub struct Certificate {
    pub cert_pem: String,
    pub key_pem: String,
    /// SHA-256 of the certificate's DER, as browsers show it: upper-case hex pairs joined by
    /// `:` (`AB:CD:..`).
    pub fingerprint: String,
}

// By hand, so that a debug log never holds the private key.
impl std::fmt::Debug for Certificate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Certificate")
            .field("fingerprint", &self.fingerprint)
            .finish_non_exhaustive()
    }
}

/// Loads `<dir>/serve-cert.pem` and `<dir>/serve-key.pem`, or makes them when there is no
/// certificate yet: ECDSA P-256, valid about ten years, for `names` (host names and IP
/// literals; "localhost" when none are given). The files are 0600 and written atomically.
///
/// A stored certificate is kept even when `names` differ from the names it was made for:
/// for a new name the operator removes both files and the next start makes a new pair.
pub fn load_or_make(dir: &Path, names: &[String]) -> Result<Certificate, TlsError> {
    let cert_path = dir.join(CERT_FILE);
    let key_path = dir.join(KEY_FILE);
    // The key is written first and the certificate last, so a certificate on disk means a
    // whole pair. A key alone is what a first start interrupted between the two leaves (or
    // what removing the certificate to get new names leaves): it was never in use, so a new
    // pair replaces it.
    if cert_path.exists() {
        return load(&cert_path, &key_path);
    }
    let made = make(names)?;
    if !dir.exists() {
        DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|error| file_error(dir, format!("cannot make the directory: {error}")))?;
    }
    write_private(&key_path, &made.key_pem)?;
    write_private(&cert_path, &made.cert_pem)?;
    Ok(made)
}

/// The rustls server configuration for the certificate, with the ring provider given
/// explicitly (the process-wide default is left alone) and HTTP/1.1 as the only ALPN
/// protocol (the server speaks nothing else).
pub fn server_config(cert: &Certificate) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let config_error = |error: &dyn std::fmt::Display| TlsError::Config(error.to_string());
    let cert_der = CertificateDer::from_pem_slice(cert.cert_pem.as_bytes())
        .map_err(|error| config_error(&format!("the certificate: {error}")))?;
    let key_der = PrivateKeyDer::from_pem_slice(cert.key_pem.as_bytes())
        .map_err(|error| config_error(&format!("the private key: {error}")))?;
    let mut config = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|error| config_error(&error))?
        .with_no_client_auth()
        .with_single_cert(vec![cert_der], key_der)
        .map_err(|error| config_error(&error))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn file_error(path: &Path, problem: String) -> TlsError {
    TlsError::File {
        path: path.to_owned(),
        problem,
    }
}

/// SHA-256 of `der`, as browsers show a certificate's fingerprint.
fn fingerprint(der: &[u8]) -> String {
    Sha256::digest(der)
        .iter()
        .map(|byte| format!("{byte:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// The largest certificate or key file read: a PEM certificate or key is a few KiB, a
/// whole chain of them tens of KiB; 1 MiB is room for any, not for a runaway file.
const MAX_PEM_BYTES: u64 = 1024 * 1024;

/// A stored pair, checked the way the TLS setup will use it: each file parses, and the key
/// is the certificate's.
fn load(cert_path: &Path, key_path: &Path) -> Result<Certificate, TlsError> {
    // A plain file only, opened without blocking, at most MAX_PEM_BYTES
    // (inbox_policy::capped_read): a FIFO or device here must not stall the server's start.
    let read = |path: &Path| {
        capped_read::read_text(path, MAX_PEM_BYTES)
            .map_err(|error| file_error(path, format!("cannot read it: {}", error.problem())))
    };
    let cert_pem = read(cert_path)?;
    if !key_path.exists() {
        return Err(file_error(
            key_path,
            format!(
                "missing: the certificate {} has no key; remove the certificate to make a new \
                 pair",
                cert_path.display()
            ),
        ));
    }
    let key_pem = read(key_path)?;
    make_private(key_path)?;

    let cert_der = CertificateDer::from_pem_slice(cert_pem.as_bytes())
        .map_err(|error| file_error(cert_path, format!("not a PEM certificate ({error})")))?;
    let key_der = PrivateKeyDer::from_pem_slice(key_pem.as_bytes())
        .map_err(|error| file_error(key_path, format!("not a PEM private key ({error})")))?;
    let signing_key = provider()
        .key_provider
        .load_private_key(key_der)
        .map_err(|error| file_error(key_path, format!("not a usable private key: {error}")))?;
    let fingerprint = fingerprint(&cert_der);
    // Comparing the key with the certificate parses the certificate too.
    match CertifiedKey::new(vec![cert_der], signing_key).keys_match() {
        Ok(()) => {}
        Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch)) => {
            return Err(TlsError::Mismatch {
                cert: cert_path.to_owned(),
                key: key_path.to_owned(),
            })
        }
        Err(error) => {
            return Err(file_error(
                cert_path,
                format!("not a usable certificate: {error}"),
            ))
        }
    }
    Ok(Certificate {
        cert_pem,
        key_pem,
        fingerprint,
    })
}

/// A new key and a certificate for `names`, signed by itself.
fn make(names: &[String]) -> Result<Certificate, TlsError> {
    let mut wanted: Vec<&str> = Vec::new();
    for name in names.iter().map(|name| name.trim()) {
        if !name.is_empty() && !wanted.contains(&name) {
            wanted.push(name);
        }
    }
    if wanted.is_empty() {
        wanted.push("localhost");
    }
    let subject_alt_names = wanted
        .iter()
        .map(|&name| match name.parse::<IpAddr>() {
            Ok(ip) => Ok(SanType::IpAddress(ip)),
            Err(_) => name.try_into().map(SanType::DnsName).map_err(|error| {
                TlsError::Make(format!(
                    "{name:?} cannot be a certificate's host name: {error}"
                ))
            }),
        })
        .collect::<Result<Vec<_>, _>>()?;

    let mut params = CertificateParams::default();
    params.subject_alt_names = subject_alt_names;
    let mut subject = DistinguishedName::new();
    subject.push(DnType::CommonName, "Answer Inbox");
    params.distinguished_name = subject;
    // From yesterday: a phone whose clock runs a little behind must not see a certificate
    // that is not valid yet.
    let today = Utc::now().date_naive();
    let yesterday = today - Days::new(1);
    let until = today + Days::new(VALID_DAYS);
    // Midnight (UTC) at the start of each day. A closure, because the type rcgen takes is
    // the `time` crate's, which this crate does not name.
    let day =
        |date: NaiveDate| rcgen::date_time_ymd(date.year(), date.month() as u8, date.day() as u8);
    params.not_before = day(yesterday);
    params.not_after = day(until);
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];

    let key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)
        .map_err(|error| TlsError::Make(format!("no key: {error}")))?;
    let cert = params
        .self_signed(&key)
        .map_err(|error| TlsError::Make(error.to_string()))?;
    Ok(Certificate {
        fingerprint: fingerprint(cert.der()),
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
    })
}

/// Writes `contents` to `path` whole or not at all, mode 0600 from the start
/// ([`inbox_app::atomic_file`]).
fn write_private(path: &Path, contents: &str) -> Result<(), TlsError> {
    inbox_app::atomic_file::write_atomically(path, contents.as_bytes(), 0o600)
        .map_err(|error| file_error(path, format!("cannot write it: {error}")))
}

/// A key file that other accounts can read (restored from a backup, copied by hand) is made
/// private before use.
fn make_private(path: &Path) -> Result<(), TlsError> {
    let mode = std::fs::metadata(path)
        .map_err(|error| file_error(path, format!("cannot read its permissions: {error}")))?
        .permissions()
        .mode();
    if mode & 0o077 != 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(
            |error| {
                file_error(
                    path,
                    format!("readable by other accounts, and cannot be made private: {error}"),
                )
            },
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::pki_types::ServerName;

    fn names(names: &[&str]) -> Vec<String> {
        names.iter().map(|name| name.to_string()).collect()
    }

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    /// A TLS handshake in memory between the server configuration and a client that trusts
    /// only `cert` and connects to `server_name`: the ALPN protocol agreed, or the error.
    fn handshake(
        config: Arc<rustls::ServerConfig>,
        cert: &Certificate,
        server_name: &str,
    ) -> Result<Option<Vec<u8>>, rustls::Error> {
        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(CertificateDer::from_pem_slice(cert.cert_pem.as_bytes()).unwrap())
            .unwrap();
        let mut client_config = rustls::ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        client_config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        let name = ServerName::try_from(server_name.to_owned()).unwrap();
        let mut client = rustls::ClientConnection::new(Arc::new(client_config), name).unwrap();
        let mut server = rustls::ServerConnection::new(config).unwrap();
        for _ in 0..10 {
            if !client.is_handshaking() && !server.is_handshaking() {
                return Ok(client.alpn_protocol().map(<[u8]>::to_vec));
            }
            let mut flight = Vec::new();
            while client.wants_write() {
                client.write_tls(&mut flight).unwrap();
            }
            let mut unread = &flight[..];
            while !unread.is_empty() {
                server.read_tls(&mut unread).unwrap();
                server.process_new_packets()?;
            }
            let mut flight = Vec::new();
            while server.wants_write() {
                server.write_tls(&mut flight).unwrap();
            }
            let mut unread = &flight[..];
            while !unread.is_empty() {
                client.read_tls(&mut unread).unwrap();
                client.process_new_packets()?;
            }
        }
        panic!("the handshake did not finish");
    }

    #[test]
    fn made_once_then_loaded_with_the_same_fingerprint() {
        let dir = tempfile::tempdir().unwrap();
        let made = load_or_make(dir.path(), &names(&["localhost", "127.0.0.1"])).unwrap();
        let loaded = load_or_make(dir.path(), &names(&["another-name"])).unwrap();
        assert_eq!(loaded.fingerprint, made.fingerprint);
        assert_eq!(loaded.cert_pem, made.cert_pem);
        assert_eq!(loaded.key_pem, made.key_pem);

        let der = CertificateDer::from_pem_slice(made.cert_pem.as_bytes()).unwrap();
        assert_eq!(made.fingerprint, fingerprint(&der));
        let pairs: Vec<_> = made.fingerprint.split(':').collect();
        assert_eq!(pairs.len(), 32);
        assert!(pairs.iter().all(
            |pair| pair.len() == 2 && pair.chars().all(|c| matches!(c, '0'..='9' | 'A'..='F'))
        ));
    }

    #[test]
    fn each_new_pair_is_new() {
        let first = make(&names(&["localhost"])).unwrap();
        let second = make(&names(&["localhost"])).unwrap();
        assert_ne!(first.fingerprint, second.fingerprint);
        assert_ne!(first.key_pem, second.key_pem);
    }

    #[test]
    fn the_files_are_private_and_no_temporary_file_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        load_or_make(&state, &names(&["localhost"])).unwrap();
        assert_eq!(mode(&state.join(CERT_FILE)), 0o600);
        assert_eq!(mode(&state.join(KEY_FILE)), 0o600);
        assert_eq!(mode(&state), 0o700);
        let mut files: Vec<_> = std::fs::read_dir(&state)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .collect();
        files.sort();
        assert_eq!(files, [CERT_FILE, KEY_FILE]);
    }

    #[test]
    fn a_readable_key_file_is_made_private_on_load() {
        let dir = tempfile::tempdir().unwrap();
        load_or_make(dir.path(), &names(&["localhost"])).unwrap();
        let key = dir.path().join(KEY_FILE);
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
        load_or_make(dir.path(), &names(&["localhost"])).unwrap();
        assert_eq!(mode(&key), 0o600);
    }

    #[test]
    fn the_server_config_serves_the_certificate_for_its_names_over_http_1_1() {
        let dir = tempfile::tempdir().unwrap();
        let cert = load_or_make(
            dir.path(),
            &names(&["localhost", "inbox.lan", "192.168.1.20", "::1"]),
        )
        .unwrap();
        let config = server_config(&cert).unwrap();
        assert_eq!(config.alpn_protocols, [b"http/1.1".to_vec()]);
        for name in ["localhost", "inbox.lan", "192.168.1.20", "::1"] {
            assert_eq!(
                handshake(Arc::clone(&config), &cert, name).unwrap(),
                Some(b"http/1.1".to_vec()),
                "{name}"
            );
        }
        // A name the certificate was not made for is refused by the client.
        assert!(handshake(Arc::clone(&config), &cert, "elsewhere.example").is_err());
    }

    #[test]
    fn no_names_means_localhost() {
        let cert = make(&[]).unwrap();
        let config = server_config(&cert).unwrap();
        assert!(handshake(config, &cert, "localhost").is_ok());
    }

    #[test]
    fn a_name_that_cannot_be_in_a_certificate_is_refused() {
        let error = make(&names(&["bücher.example"])).unwrap_err().to_string();
        assert!(error.contains("bücher.example"), "{error}");
    }

    #[test]
    fn a_corrupt_certificate_is_an_error_naming_it_and_is_kept() {
        for garbage in [
            "not a certificate".to_owned(),
            "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n".to_owned(),
        ] {
            let dir = tempfile::tempdir().unwrap();
            load_or_make(dir.path(), &names(&["localhost"])).unwrap();
            let cert_path = dir.path().join(CERT_FILE);
            std::fs::write(&cert_path, &garbage).unwrap();
            let error = load_or_make(dir.path(), &names(&["localhost"])).unwrap_err();
            assert!(
                matches!(&error, TlsError::File { path, .. } if *path == cert_path),
                "{error:?}"
            );
            assert!(error.to_string().contains(CERT_FILE), "{error}");
            assert_eq!(std::fs::read_to_string(&cert_path).unwrap(), garbage);
        }
    }

    #[test]
    fn a_corrupt_key_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        load_or_make(dir.path(), &names(&["localhost"])).unwrap();
        let key_path = dir.path().join(KEY_FILE);
        std::fs::write(&key_path, "not a key").unwrap();
        let error = load_or_make(dir.path(), &names(&["localhost"])).unwrap_err();
        assert!(error.to_string().contains(KEY_FILE), "{error}");
    }

    #[test]
    fn a_fifo_or_an_oversized_file_in_the_pair_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        load_or_make(dir.path(), &names(&["localhost"])).unwrap();
        let key_path = dir.path().join(KEY_FILE);
        std::fs::remove_file(&key_path).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(&key_path)
            .status()
            .unwrap();
        assert!(made.success());
        // On another thread with a deadline: a blocking open would wait for a writer forever.
        let (sender, receiver) = std::sync::mpsc::channel();
        let state = dir.path().to_owned();
        std::thread::spawn(move || {
            let loaded = load_or_make(&state, &names(&["localhost"]));
            sender.send(loaded.map(|_| ()).map_err(|error| error.to_string()))
        });
        let error = receiver
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("loading blocked on the FIFO")
            .unwrap_err();
        assert!(
            error.contains(KEY_FILE) && error.contains("a FIFO, not a plain file"),
            "{error}"
        );

        let cert_path = dir.path().join(CERT_FILE);
        std::fs::File::create(&cert_path)
            .unwrap()
            .set_len(MAX_PEM_BYTES + 1)
            .unwrap();
        let error = load_or_make(dir.path(), &names(&["localhost"]))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains(CERT_FILE) && error.contains("larger than the limit of 1048576 bytes"),
            "{error}"
        );
    }

    #[test]
    fn a_key_of_another_certificate_is_a_mismatch() {
        let dir = tempfile::tempdir().unwrap();
        load_or_make(dir.path(), &names(&["localhost"])).unwrap();
        std::fs::write(
            dir.path().join(KEY_FILE),
            make(&names(&["localhost"])).unwrap().key_pem,
        )
        .unwrap();
        let error = load_or_make(dir.path(), &names(&["localhost"])).unwrap_err();
        assert!(matches!(error, TlsError::Mismatch { .. }), "{error:?}");
    }

    #[test]
    fn a_certificate_without_its_key_is_an_error_naming_the_key_file() {
        let dir = tempfile::tempdir().unwrap();
        load_or_make(dir.path(), &names(&["localhost"])).unwrap();
        std::fs::remove_file(dir.path().join(KEY_FILE)).unwrap();
        let error = load_or_make(dir.path(), &names(&["localhost"])).unwrap_err();
        assert!(error.to_string().contains(KEY_FILE), "{error}");
        assert!(dir.path().join(CERT_FILE).exists());
    }

    #[test]
    fn a_key_without_a_certificate_is_replaced_by_a_new_pair() {
        let dir = tempfile::tempdir().unwrap();
        let first = load_or_make(dir.path(), &names(&["localhost"])).unwrap();
        std::fs::remove_file(dir.path().join(CERT_FILE)).unwrap();
        let second = load_or_make(dir.path(), &names(&["inbox.lan"])).unwrap();
        assert_ne!(second.fingerprint, first.fingerprint);
        assert_eq!(
            load_or_make(dir.path(), &[]).unwrap().fingerprint,
            second.fingerprint
        );
    }

    #[test]
    fn debug_output_holds_no_private_key() {
        let cert = make(&[]).unwrap();
        assert!(!format!("{cert:?}").contains("PRIVATE KEY"));
    }
}
