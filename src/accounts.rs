//! Creating clients and users: shared by the command line and the sandbox demo.

use serde_json::{Value, json};

use crate::oauth::scope::Scopes;
use crate::oauth::{
    GRANT_AUTHORIZATION_CODE, GRANT_CLIENT_CREDENTIALS, GRANT_REFRESH_TOKEN, password, secret,
};
use crate::store::oauth::{self as store, Client};
use crate::store::users::{self, NewUser};
use crate::store::{Db, DbError};

/// What `souk client create` takes.
#[derive(Clone, Debug, Default)]
pub struct ClientSpec {
    pub name: String,
    pub redirect_uris: Vec<String>,
    /// Allowed scopes; `None`: `read write purchase` (client scopes must be asked for).
    pub scopes: Option<String>,
    pub default_scopes: Option<String>,
    /// Grants; empty: authorization_code and refresh_token if there is a redirect URI,
    /// and client_credentials unless the client is public.
    pub grants: Vec<String>,
    pub public: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Db(#[from] DbError),
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
        let ok = (uri.starts_with("https://") || uri.starts_with("http://")) && !uri.contains('#');
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
    let id = secret::new_client_id();
    let client_secret = (!spec.public).then(secret::new_token);
    let client = Client {
        id: id.clone(),
        name: spec.name.trim().to_owned(),
        secret_hash: client_secret.as_deref().map(secret::hash),
        redirect_uris: spec.redirect_uris,
        scopes: scopes.to_string(),
        default_scopes: defaults.to_string(),
        grants,
    };
    db.write(move |conn| Box::pin(async move { store::insert_client(conn, &client, now).await }))
        .await?;
    Ok((id, client_secret))
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

/// What `souk user create` takes.
#[derive(Clone, Debug, Default)]
pub struct UserSpec {
    pub email: String,
    pub password: String,
    pub name: Option<String>,
    pub postcode: Option<String>,
    pub phone_number: Option<String>,
    pub locale: String,
}

/// Creates a confirmed user (the operator vouches for the address); returns the id.
pub async fn create_user(db: &Db, spec: UserSpec, now: i64) -> Result<i64, AccountError> {
    let problems = crate::domain::user::check_new_account(&crate::domain::user::NewAccount {
        email: Some(&spec.email),
        password: Some(&spec.password),
        name: spec.name.as_deref(),
        postcode: spec.postcode.as_deref(),
        phone_number: spec.phone_number.as_deref(),
    });
    if let Some(problem) = problems.as_ref().err().and_then(|p| p.first()) {
        return Err(AccountError::Invalid(format!(
            "{}: {}",
            problem.fields.join(", "),
            problem.message.dutch
        )));
    }
    let hash = password::hash(spec.password.clone()).await;
    let name = spec.name.clone().unwrap_or_else(|| {
        spec.email
            .split('@')
            .next()
            .unwrap_or("")
            .chars()
            .take(30)
            .collect()
    });
    let result = db
        .write(move |conn| {
            Box::pin(async move {
                users::insert(
                    conn,
                    &NewUser {
                        email: spec.email.trim(),
                        password_hash: &hash,
                        name: &name,
                        postcode: spec.postcode.as_deref(),
                        phone_number: spec.phone_number.as_deref(),
                        locale: &spec.locale,
                        confirmed: true,
                    },
                    now,
                )
                .await
            })
        })
        .await;
    match result {
        Err(DbError::UniqueViolation(_)) => {
            Err(AccountError::Invalid("that e-mail address is taken".into()))
        }
        other => Ok(other?),
    }
}
