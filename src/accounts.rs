//! Clients and users as the command line and the sandbox demo make them: what the operator
//! gives is checked and turned into the use case's input, which runs in a write of its own.

use serde_json::{Value, json};

use crate::domain::field_error::FieldError;
use crate::domain::locale::Locale;
use crate::domain::user::{NewAccount, check_new_account};
use crate::oauth::Client;
use crate::oauth::scope::Scopes;
use crate::oauth::{
    GRANT_AUTHORIZATION_CODE, GRANT_CLIENT_CREDENTIALS, GRANT_REFRESH_TOKEN, password,
};
use crate::store::{Db, DbError};
use crate::usecase;
use crate::usecase::accounts::{self, NewClient, Registration};

/// What `souk client create` takes (its options).
#[derive(Clone, Debug, Default, clap::Args)]
pub struct ClientSpec {
    #[arg(long)]
    pub name: String,
    /// A redirect URI of the client (repeatable).
    #[arg(long = "redirect-uri")]
    pub redirect_uris: Vec<String>,
    /// Scopes the client may be granted (default "read write purchase"; client scopes
    /// create_account, confirm_upcall and webhooks only when named).
    #[arg(long)]
    pub scopes: Option<String>,
    /// Scopes used when a request names none (default: all allowed that fit the grant).
    #[arg(long = "default-scopes")]
    pub default_scopes: Option<String>,
    /// A grant the client may use (repeatable): authorization_code, refresh_token,
    /// client_credentials. None named: authorization_code and refresh_token if there is a
    /// redirect URI, and client_credentials unless the client is public.
    #[arg(long = "grant")]
    pub grants: Vec<String>,
    /// A public client: no secret, PKCE required.
    #[arg(long)]
    pub public: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Db(#[from] DbError),
}

impl From<usecase::Error> for AccountError {
    fn from(e: usecase::Error) -> Self {
        match e {
            usecase::Error::Db(e) => AccountError::Db(e),
            usecase::Error::Invalid(problems) => AccountError::Invalid(describe(&problems)),
            other => AccountError::Invalid(format!("{other:?}")),
        }
    }
}

/// The first problem, for the operator.
fn describe(problems: &[FieldError]) -> String {
    match problems.first() {
        Some(problem) if problem.code == "email-in-use" => "that e-mail address is taken".into(),
        Some(problem) => format!("{}: {}", problem.fields.join(", "), problem.message.dutch),
        None => "refused".into(),
    }
}

/// Registers a client; returns its id and (for a confidential client) its secret, which is
/// shown this once and stored only as a hash.
pub async fn create_client(
    db: &Db,
    spec: ClientSpec,
    now: i64,
) -> Result<(String, Option<String>), AccountError> {
    if spec.name.trim().is_empty() {
        return Err(AccountError::Invalid("--name must not be empty".into()));
    }
    for uri in &spec.redirect_uris {
        // An absolute URL with a host (`http://` alone, or one with a space, is no address
        // a browser can be sent to) and no fragment (RFC 6749 §3.1.2; a bare `#` is an
        // empty one). The url crate takes spaces and line breaks, which it would encode.
        let parsed = url::Url::parse(uri).ok();
        let ok = parsed.is_some_and(|url| {
            matches!(url.scheme(), "http" | "https")
                && url.host().is_some()
                && url.fragment().is_none()
        }) && !uri.contains(char::is_whitespace);
        if !ok {
            return Err(AccountError::Invalid(format!(
                "redirect URI `{uri}` must be an absolute http(s) URL without a fragment"
            )));
        }
    }
    let scopes = Scopes::parse(spec.scopes.as_deref().unwrap_or("read write purchase"))
        .map_err(|s| AccountError::Invalid(format!("unknown scope `{s}`")))?;
    let defaults = Scopes::parse(spec.default_scopes.as_deref().unwrap_or(""))
        .map_err(|s| AccountError::Invalid(format!("unknown scope `{s}`")))?;
    if !defaults.is_subset(&scopes) {
        return Err(AccountError::Invalid(
            "--default-scopes must be among --scopes".into(),
        ));
    }
    let mut grants = spec.grants.clone();
    if grants.is_empty() {
        if !spec.redirect_uris.is_empty() {
            grants.push(GRANT_AUTHORIZATION_CODE.into());
            grants.push(GRANT_REFRESH_TOKEN.into());
        }
        if !spec.public {
            grants.push(GRANT_CLIENT_CREDENTIALS.into());
        }
    }
    for grant in &grants {
        if ![
            GRANT_AUTHORIZATION_CODE,
            GRANT_REFRESH_TOKEN,
            GRANT_CLIENT_CREDENTIALS,
        ]
        .contains(&grant.as_str())
        {
            return Err(AccountError::Invalid(format!("unknown grant `{grant}`")));
        }
    }
    if spec.public && grants.iter().any(|g| g == GRANT_CLIENT_CREDENTIALS) {
        return Err(AccountError::Invalid(
            "a public client cannot use client_credentials".into(),
        ));
    }
    if grants.iter().any(|g| g == GRANT_AUTHORIZATION_CODE) && spec.redirect_uris.is_empty() {
        return Err(AccountError::Invalid(
            "authorization_code needs a --redirect-uri".into(),
        ));
    }
    // A client that can obtain no token is a mistake, not a registration.
    if grants.is_empty() {
        return Err(AccountError::Invalid(
            "no grant: give --redirect-uri (authorization_code) or --grant".into(),
        ));
    }
    if grants.iter().any(|g| g == GRANT_REFRESH_TOKEN)
        && !grants.iter().any(|g| g == GRANT_AUTHORIZATION_CODE)
    {
        return Err(AccountError::Invalid(
            "refresh_token needs authorization_code, which issues the refresh tokens".into(),
        ));
    }
    if scopes.is_empty() {
        return Err(AccountError::Invalid(
            "--scopes must name one at least".into(),
        ));
    }
    let client = NewClient {
        name: spec.name.trim().to_owned(),
        redirect_uris: spec.redirect_uris,
        scopes,
        default_scopes: defaults,
        grants,
        public: spec.public,
    };
    let registered = db
        .write(move |conn| Box::pin(accounts::register_client(conn, client, now)))
        .await?;
    Ok((registered.id, registered.secret))
}

/// The client as `souk client list` shows it (never a secret).
pub fn client_json(client: &Client) -> Value {
    json!({
        "client_id": client.id,
        "name": client.name,
        "public": client.secret_hash.is_none(),
        "redirect_uris": client.redirect_uris,
        "scopes": client.scopes,
        "default_scopes": client.default_scopes,
        "grants": client.grants,
    })
}

/// What `souk user create` takes (its options, and the region's locale).
#[derive(Clone, Debug, Default, clap::Args)]
pub struct UserSpec {
    #[arg(long)]
    pub email: String,
    /// The password (visible to anyone who lists the processes: see --password-stdin).
    #[arg(long, required_unless_present = "password_stdin")]
    pub password: Option<String>,
    /// Read the password from the first line of standard input.
    #[arg(long, conflicts_with = "password")]
    pub password_stdin: bool,
    /// The public name (none: an empty one).
    #[arg(long)]
    pub name: Option<String>,
    #[arg(long)]
    pub postcode: Option<String>,
    #[arg(long = "phone")]
    pub phone_number: Option<String>,
    #[arg(skip)]
    pub locale: String,
}

/// Creates a confirmed user (the operator vouches for the address); returns the id.
pub async fn create_user(db: &Db, spec: UserSpec, now: i64) -> Result<i64, AccountError> {
    let password = spec.password.unwrap_or_default();
    let account = check_new_account(&NewAccount {
        email: Some(spec.email),
        password: Some(password.clone()),
        name: spec.name,
        postcode: spec.postcode,
        phone_number: spec.phone_number,
    })
    .map_err(|problems| AccountError::Invalid(describe(&problems)))?;
    let locale = Locale::parse(&spec.locale)
        .ok_or_else(|| AccountError::Invalid(format!("unknown locale `{}`", spec.locale)))?;
    let hash = password::hash(password).await;
    let registered = db
        .write(move |conn| {
            Box::pin(async move {
                accounts::register(conn, &account, &hash, locale, Registration::ByOperator, now)
                    .await
            })
        })
        .await?;
    Ok(registered.user.id)
}
