//! TLS to PostgreSQL, as libpq's `sslmode` and `sslrootcert` say in the URL.
//!
//! - `disable`: never.
//! - `prefer` (the default, as libpq's): TLS where the server offers it, else without.
//! - `require`: TLS or no connection.
//! - `prefer` and `require` take any certificate, as libpq does: they keep the traffic from
//!   being read, not a server from being impersonated.
//! - `verify-ca`: the certificate must chain to a trusted root.
//! - `verify-full`: that, and it must name the host connected to.
//!
//! The trusted roots: the PEM file `sslrootcert` names; for `verify-full` only, the
//! system's (`sslrootcert=system`, and by default: libpq would read
//! `~/.postgresql/root.crt`, which a service's container seldom has). The system's roots
//! vouch for any name a public authority certified, so without the check of the name they
//! are refused, as libpq refuses them. Like libpq, `require` with `sslrootcert` verifies
//! the chain as `verify-ca`.
//! `tokio-postgres` knows neither `verify-*` nor `sslrootcert`: they are taken out of the
//! URL here, and it is told `require`.

use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::store::DbError;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

/// What the URL asks of TLS: the mode, and the roots to verify with (`None`: none).
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Tls {
    mode: Mode,
    roots: Option<Roots>,
}

#[derive(Debug, PartialEq, Eq)]
enum Roots {
    System,
    File(String),
}

impl Tls {
    /// Takes the TLS settings out of `url`; returns them and the URL `tokio-postgres`
    /// reads, every other parameter as it was written.
    pub(super) fn split_url(url: &str) -> Result<(Tls, String), DbError> {
        let invalid = |what: String| DbError::Other(format!("invalid PostgreSQL URL: {what}"));
        // Where `tokio-postgres` finds the query: after the credentials, which end at the
        // first `@` (a password may hold a `?`).
        let credentials_end = url.find('@').map_or(0, |at| at + 1);
        let (base, query) = match url[credentials_end..].find('?') {
            Some(at) => url.split_at(credentials_end + at),
            None => (url, ""),
        };
        let query = query.strip_prefix('?').unwrap_or(query);
        let decode = |text: &str| {
            percent_encoding::percent_decode_str(text)
                .decode_utf8()
                .map(|text| text.into_owned())
                .map_err(|e| invalid(format!("{text}: {e}")))
        };
        let mut kept = Vec::new();
        let (mut mode, mut root_file) = (None, None);
        for pair in query.split('&').filter(|pair| !pair.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let (key, value) = (decode(key)?, decode(value)?);
            match key.as_str() {
                "sslmode" => {
                    mode = Some(match value.as_str() {
                        "disable" => Mode::Disable,
                        "prefer" => Mode::Prefer,
                        "require" => Mode::Require,
                        "verify-ca" => Mode::VerifyCa,
                        "verify-full" => Mode::VerifyFull,
                        other => {
                            return Err(invalid(format!(
                                "sslmode `{other}`: use disable, prefer, require, verify-ca or verify-full"
                            )));
                        }
                    })
                }
                "sslrootcert" if value.is_empty() => {
                    return Err(invalid("sslrootcert is empty".into()));
                }
                "sslrootcert" => root_file = Some(value),
                _ => kept.push(pair),
            }
        }
        let mode = mode.unwrap_or(Mode::Prefer);
        let roots = match (mode, root_file) {
            (Mode::Disable, _) => None,
            // The system's roots vouch for any name a public authority certified: only a
            // check of the name makes them worth anything (libpq refuses them otherwise).
            (Mode::VerifyFull, None) => Some(Roots::System),
            (Mode::VerifyFull, Some(file)) if file == "system" => Some(Roots::System),
            (_, Some(file)) if file == "system" => {
                return Err(invalid(
                    "sslrootcert=system needs sslmode=verify-full: the system's roots vouch for \
                     names, which only verify-full checks"
                        .into(),
                ));
            }
            (Mode::VerifyCa, None) => {
                return Err(invalid(
                    "sslmode=verify-ca needs sslrootcert, the PEM file of the roots that \
                     signed the server's certificate"
                        .into(),
                ));
            }
            (_, Some(file)) => Some(Roots::File(file)),
            (Mode::Prefer | Mode::Require, None) => None,
        };
        kept.push(match mode {
            Mode::Disable => "sslmode=disable",
            Mode::Prefer => "sslmode=prefer",
            Mode::Require | Mode::VerifyCa | Mode::VerifyFull => "sslmode=require",
        });
        Ok((Tls { mode, roots }, format!("{base}?{}", kept.join("&"))))
    }

    /// Fails unless `tokio-postgres` read from the URL the mode it was to be told: a URL
    /// that it splits otherwise than [`Tls::split_url`] must not connect with less TLS
    /// than it asked for.
    pub(super) fn check(&self, read: tokio_postgres::config::SslMode) -> Result<(), DbError> {
        use tokio_postgres::config::SslMode;
        let expected = match self.mode {
            Mode::Disable => SslMode::Disable,
            Mode::Prefer => SslMode::Prefer,
            Mode::Require | Mode::VerifyCa | Mode::VerifyFull => SslMode::Require,
        };
        if read == expected {
            Ok(())
        } else {
            Err(DbError::Other(format!(
                "invalid PostgreSQL URL: its sslmode reads as {read:?} where {:?} was meant",
                self.mode
            )))
        }
    }

    /// The connector `tokio-postgres` makes its TLS connections with.
    pub(super) fn connector(&self) -> Result<MakeRustlsConnect, DbError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier: Arc<dyn ServerCertVerifier> = match &self.roots {
            None => Arc::new(Unverified(provider.clone())),
            Some(roots) => {
                let verifier = WebPkiServerVerifier::builder_with_provider(
                    Arc::new(roots.load()?),
                    provider.clone(),
                )
                .build()
                .map_err(|e| {
                    DbError::Other(format!("cannot verify PostgreSQL with those roots: {e}"))
                })?;
                if self.mode == Mode::VerifyFull {
                    verifier
                } else {
                    Arc::new(AnyName(verifier))
                }
            }
        };
        let config = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| DbError::Other(format!("TLS: {e}")))?
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_no_client_auth();
        Ok(MakeRustlsConnect::new(config))
    }
}

impl Roots {
    fn load(&self) -> Result<RootCertStore, DbError> {
        let mut store = RootCertStore::empty();
        match self {
            Roots::System => {
                let found = rustls_native_certs::load_native_certs();
                store.add_parsable_certificates(found.certs);
                if store.is_empty() {
                    return Err(DbError::Other(format!(
                        "sslmode=verify-full: no system root certificates found ({:?}); name a PEM file with sslrootcert",
                        found.errors
                    )));
                }
            }
            Roots::File(path) => {
                let unreadable =
                    |e: &dyn std::fmt::Display| DbError::Other(format!("sslrootcert {path}: {e}"));
                for cert in CertificateDer::pem_file_iter(path).map_err(|e| unreadable(&e))? {
                    store
                        .add(cert.map_err(|e| unreadable(&e))?)
                        .map_err(|e| unreadable(&e))?;
                }
                if store.is_empty() {
                    return Err(unreadable(&"no certificate in the file"));
                }
            }
        }
        Ok(store)
    }
}

/// `prefer` and `require` without roots: any certificate, its handshake signatures still
/// checked.
#[derive(Debug)]
struct Unverified(Arc<CryptoProvider>);

impl ServerCertVerifier for Unverified {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca`: the chain is verified, the name in the certificate is not.
#[derive(Debug)]
struct AnyName(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AnyName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            verified => verified,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_keeps_every_other_parameter_as_written() {
        let (tls, url) = Tls::split_url(
            "postgres://u:p@db/souk?options=-c%20jit%3Don+x&sslmode=verify-full&sslrootcert=%2Fca.pem&application_name=a",
        )
        .unwrap();
        assert_eq!(
            tls,
            Tls {
                mode: Mode::VerifyFull,
                roots: Some(Roots::File("/ca.pem".into()))
            }
        );
        assert_eq!(
            url,
            "postgres://u:p@db/souk?options=-c%20jit%3Don+x&application_name=a&sslmode=require"
        );
    }

    #[test]
    fn modes_default_and_roots_follow_libpq() {
        let split = |url: &str| Tls::split_url(url).unwrap();
        let (tls, url) = split("postgres://db/souk");
        assert_eq!((tls.mode, tls.roots), (Mode::Prefer, None));
        assert_eq!(url, "postgres://db/souk?sslmode=prefer");
        let (tls, _) = split("postgres://db/souk?sslmode=require");
        assert_eq!((tls.mode, tls.roots), (Mode::Require, None));
        let (tls, _) = split("postgres://db/souk?sslmode=require&sslrootcert=/ca.pem");
        assert_eq!(tls.roots, Some(Roots::File("/ca.pem".into())));
        let (tls, _) = split("postgres://db/souk?sslmode=verify-full");
        assert_eq!(tls.roots, Some(Roots::System));
        let (tls, _) = split("postgres://db/souk?sslmode=verify-ca&sslrootcert=/ca.pem");
        assert_eq!(tls.roots, Some(Roots::File("/ca.pem".into())));
        // A password's `?` is not the query's start, as for `tokio-postgres`; a `+` in a
        // value is a `+`.
        let (tls, url) = split("postgres://u:p?w@db/souk?sslmode=require&sslrootcert=/ca+b.pem");
        assert_eq!(
            (tls.mode, tls.roots),
            (Mode::Require, Some(Roots::File("/ca+b.pem".into())))
        );
        assert_eq!(url, "postgres://u:p?w@db/souk?sslmode=require");
        let (tls, url) = split("postgres://db/souk?sslmode=disable&sslrootcert=/ca.pem");
        assert_eq!((tls.mode, tls.roots), (Mode::Disable, None));
        assert_eq!(url, "postgres://db/souk?sslmode=disable");
        // Roots that would vouch for nothing: the system's without the check of the name, and
        // none at all for verify-ca.
        for bad in [
            "sslmode=allow",
            "sslmode=",
            "sslrootcert=",
            "sslmode=verify-ca",
            "sslmode=verify-ca&sslrootcert=system",
            "sslmode=require&sslrootcert=system",
        ] {
            let refused = Tls::split_url(&format!("postgres://db/souk?{bad}"));
            assert!(matches!(refused, Err(DbError::Other(_))), "{bad}");
        }
    }
}
