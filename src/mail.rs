//! Outgoing mail: SMTP when `SOUK_SMTP_URL` is set, else a file outbox in the data
//! directory (`outbox/*.eml`) that developers and tests read.

use std::path::PathBuf;

use lettre::message::Mailbox;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mail {
    pub to: String,
    pub subject: String,
    pub body: String,
}

pub enum Mailer {
    Outbox(PathBuf),
    Smtp {
        transport: Box<AsyncSmtpTransport<Tokio1Executor>>,
        from: Mailbox,
    },
}

#[derive(Debug, thiserror::Error)]
#[error("mail: {0}")]
pub struct MailError(String);

/// How long one send may take: well within the five-minute leases of the mail queue and
/// of saved-search alerts, so that no other sender takes a mail over while this one is
/// still sending it.
pub const SEND_TIMEOUT_SECS: u64 = 120;

impl Mailer {
    /// SMTP with `smtp_url` (`smtp://user:password@host:port`), else the outbox.
    pub fn new(
        smtp_url: Option<&str>,
        from: &str,
        data_dir: &std::path::Path,
    ) -> Result<Mailer, MailError> {
        match smtp_url {
            Some(url) => Ok(Mailer::Smtp {
                transport: Box::new(
                    AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
                        .map_err(|e| MailError(format!("SOUK_SMTP_URL: {e}")))?
                        .build(),
                ),
                from: from
                    .parse()
                    .map_err(|e| MailError(format!("SOUK_MAIL_FROM `{from}`: {e}")))?,
            }),
            None => Ok(Mailer::Outbox(data_dir.join("outbox"))),
        }
    }

    /// Sends `mail`, giving up after [`SEND_TIMEOUT_SECS`]. A send cut off may have been
    /// delivered all the same: such a mail goes twice, never not at all.
    pub async fn send_in_time(&self, mail: &Mail) -> Result<(), MailError> {
        let limit = std::time::Duration::from_secs(SEND_TIMEOUT_SECS);
        match tokio::time::timeout(limit, self.send(mail)).await {
            Ok(sent) => sent,
            Err(_) => Err(MailError(format!("no answer within {SEND_TIMEOUT_SECS} s"))),
        }
    }

    pub async fn send(&self, mail: &Mail) -> Result<(), MailError> {
        match self {
            Mailer::Outbox(dir) => {
                tokio::fs::create_dir_all(dir)
                    .await
                    .map_err(|e| MailError(format!("{}: {e}", dir.display())))?;
                let name = format!("{}.eml", ulid::Ulid::generate());
                let text = format!(
                    "To: {}\nSubject: {}\nContent-Type: text/plain; charset=utf-8\n\n{}\n",
                    mail.to, mail.subject, mail.body
                );
                tokio::fs::write(dir.join(name), text)
                    .await
                    .map_err(|e| MailError(format!("{}: {e}", dir.display())))
            }
            Mailer::Smtp { transport, from } => {
                let message = Message::builder()
                    .from(from.clone())
                    .to(mail
                        .to
                        .parse()
                        .map_err(|e| MailError(format!("{}: {e}", mail.to)))?)
                    .subject(mail.subject.clone())
                    .body(mail.body.clone())
                    .map_err(|e| MailError(e.to_string()))?;
                transport
                    .send(message)
                    .await
                    .map(|_| ())
                    .map_err(|e| MailError(e.to_string()))
            }
        }
    }
}
