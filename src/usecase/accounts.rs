//! Accounts: users who register (through the API, or made by an operator), confirm their
//! address and change it, and the brands they sell; and the clients (applications) an
//! operator registers.
//!
//! Passwords are hashed by the caller before the write (argon2 takes a while, and a write
//! on SQLite runs on the one writer thread); mails go out after the commit.

use crate::domain::field_error::FieldError;
use crate::domain::locale::{Language, Locale, Text};
use crate::domain::user::{Account, Email, UserStatus, check_brands, email_in_use};
use crate::mail::Mail;
use crate::oauth::Client;
use crate::oauth::scope::Scopes;
use crate::oauth::secret;
use crate::store::oauth::{
    self as oauth_store, ConfirmationPurpose, EmailConfirmation, UserSecret,
};
use crate::store::users::{self, NewUser, User};
use crate::store::{Conn, DbError};

use super::{Conflict, Error, Thing, mail_queue};

/// A confirmation link is valid for a week.
pub const CONFIRMATION_SECONDS: i64 = 7 * 86_400;

/// How an account comes to be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Registration {
    /// Through the API: unconfirmed until its owner follows the link mailed to them.
    SelfService(LinkMail),
    /// By an operator (the command line, the sandbox demo), who vouches for the address:
    /// confirmed at once.
    ByOperator,
}

/// How a mailed confirmation link is written: where it points and in which language.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkMail {
    /// The authorization server's address: the link is `{auth_url}/accounts/confirm?token=`.
    pub auth_url: String,
    pub language: Language,
}

/// A new user.
#[derive(Debug)]
pub struct Registered {
    pub user: User,
}

/// Creates the user of a checked account; `password_hash` is empty when the owner chooses a
/// password on confirming. A taken address is the field error `email-in-use`.
pub async fn register(
    conn: &mut dyn Conn,
    account: &Account,
    password_hash: &str,
    locale: Locale,
    registration: Registration,
    now: i64,
) -> Result<Registered, Error> {
    let status = match registration {
        Registration::SelfService(_) => UserStatus::Unconfirmed,
        Registration::ByOperator => UserStatus::Confirmed,
    };
    let new_user = NewUser {
        email: &account.email,
        password_hash,
        name: &account.name,
        postcode: account.postcode.as_deref(),
        phone_number: account.phone_number.as_deref(),
        locale,
        status,
    };
    let id = match users::insert(conn, &new_user, now).await {
        Err(DbError::UniqueViolation(_)) => {
            return Err(email_in_use("email", &account.email).into());
        }
        other => other?,
    };
    if let Registration::SelfService(how) = &registration {
        let confirmation = EmailConfirmation {
            user_id: id,
            purpose: ConfirmationPurpose::Account,
            new_email: None,
        };
        let link_hash = new_link(conn, &confirmation, now).await?;
        let mail = link_mail(&account.email, ConfirmationPurpose::Account, how);
        mail_queue::post_with_link(conn, &mail, &link_hash, now).await?;
    }
    let user = users::get(conn, id).await?.ok_or(DbError::NotFound)?;
    Ok(Registered { user })
}

/// Asks to change `user`'s address to `email`: mails that address the link that makes the
/// change, and retires the links of earlier requests (a mistyped address must not keep a
/// link that takes the account). An address another account has is `email-in-use`; the
/// user's own, `input-invalid`.
pub async fn request_email_change(
    conn: &mut dyn Conn,
    user: i64,
    email: &Email,
    how: &LinkMail,
    now: i64,
) -> Result<(), Error> {
    // Held first: of two requests at once, the second retires the first one's link.
    users::lock(conn, user).await?;
    match users::by_email(conn, email).await? {
        Some(holder) if holder.id == user => return Err(already_yours(email).into()),
        Some(_) => return Err(email_in_use("newEmail", email).into()),
        None => {}
    }
    let confirmation = EmailConfirmation {
        user_id: user,
        purpose: ConfirmationPurpose::EmailChange,
        new_email: Some(email.clone()),
    };
    oauth_store::retire_email_changes(conn, user, now).await?;
    let link_hash = new_link(conn, &confirmation, now).await?;
    let mail = link_mail(email, ConfirmationPurpose::EmailChange, how);
    Ok(mail_queue::post_with_link(conn, &mail, &link_hash, now).await?)
}

/// The user's own address, asked for as a new one: nothing to change (and no one else's).
fn already_yours(email: &Email) -> FieldError {
    FieldError::new(
        "newEmail",
        "input-invalid",
        Text::new("is al je e-mailadres", "est déjà votre adresse"),
    )
    .with_value(email.as_str())
}

/// The mail that carries a confirmation link, with a placeholder for the link's token: its
/// sender mints the token (`mail_queue`).
fn link_mail(to: &Email, purpose: ConfirmationPurpose, how: &LinkMail) -> Mail {
    let url = format!(
        "{}/accounts/confirm?token={}",
        how.auth_url,
        mail_queue::LINK_TOKEN
    );
    let dutch = how.language == Language::Dutch;
    let (subject, intro) = match (purpose, dutch) {
        (ConfirmationPurpose::Account, true) => (
            "Bevestig je Souk-account",
            "Welkom bij Souk! Bevestig je account via deze link:",
        ),
        (ConfirmationPurpose::Account, false) => (
            "Confirmez votre compte Souk",
            "Bienvenue sur Souk ! Confirmez votre compte via ce lien :",
        ),
        (ConfirmationPurpose::EmailChange, true) => (
            "Bevestig je nieuwe e-mailadres",
            "Bevestig via deze link dat dit je nieuwe e-mailadres voor Souk is:",
        ),
        (ConfirmationPurpose::EmailChange, false) => (
            "Confirmez votre nouvelle adresse e-mail",
            "Confirmez via ce lien qu'il s'agit de votre nouvelle adresse e-mail pour Souk :",
        ),
    };
    let footer = if dutch {
        "De link is een week geldig. Heb je dit niet aangevraagd? Dan kun je deze mail negeren."
    } else {
        "Le lien est valable une semaine. Vous n'êtes pas à l'origine de cette demande ? Ignorez ce message."
    };
    Mail {
        to: to.as_str().to_owned(),
        subject: subject.to_owned(),
        body: format!("{intro}\n\n{url}\n\n{footer}"),
    }
}

/// What a followed link confirmed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Confirmed {
    /// A new account (with the password its owner chose, if it had none).
    Account { user_id: i64 },
    /// A new address of an account.
    Email { user_id: i64 },
}

/// Confirms what the link with `link_hash` stands for, once; `None` for a link that is
/// unknown, used or expired. `password_hash` is the password the owner chose on the page,
/// taken only by an account without one, which must choose one (else the field error
/// `missing` on `password`, and the link stays usable). If another account took a new
/// address meanwhile, nothing changes and the link stays usable. A new address confirmed
/// retires the account's other address-change links, and confirms the account too: the
/// link proved the address.
pub async fn confirm(
    conn: &mut dyn Conn,
    link_hash: &str,
    password_hash: Option<String>,
    now: i64,
) -> Result<Option<Confirmed>, Error> {
    // The user first, then the link, as a request for a link holds them.
    oauth_store::lock_owner(conn, UserSecret::ConfirmationLink(link_hash)).await?;
    let Some(confirmation) = oauth_store::take_confirmation(conn, link_hash, now).await? else {
        return Ok(None);
    };
    let user_id = confirmation.user_id;
    match confirmation.new_email {
        Some(email) => match users::set_email(conn, user_id, &email).await {
            Err(DbError::UniqueViolation(_)) => Err(Error::Conflict(Conflict::EmailTaken)),
            other => {
                other?;
                oauth_store::retire_email_changes(conn, user_id, now).await?;
                users::confirm(conn, user_id, now).await?;
                Ok(Some(Confirmed::Email { user_id }))
            }
        },
        None => {
            let user = users::get(conn, user_id).await?;
            if user.is_some_and(|u| u.password_hash.is_empty()) {
                // Without one the account could never sign in: the link stays for the
                // owner's next try (the error rolls back its use).
                let password_hash = password_hash.ok_or_else(|| FieldError::missing("password"))?;
                users::set_password(conn, user_id, &password_hash).await?;
            }
            users::confirm(conn, user_id, now).await?;
            Ok(Some(Confirmed::Account { user_id }))
        }
    }
}

/// Whether the link, still usable at `now`, confirms an account whose owner has yet to
/// choose a password.
pub async fn link_wants_password(
    conn: &mut dyn Conn,
    link_hash: &str,
    now: i64,
) -> Result<bool, Error> {
    Ok(oauth_store::confirmation_wants_password(conn, link_hash, now).await?)
}

/// The brands `user` sells, in order.
pub async fn brands(conn: &mut dyn Conn, user: i64) -> Result<Vec<String>, Error> {
    if users::get(conn, user).await?.is_none() {
        return Err(Error::NotFound(Thing::User));
    }
    Ok(users::brands(conn, user).await?)
}

/// Replaces the brands `user` sells (`domain::user::check_brands`); returns them as stored.
pub async fn set_brands(
    conn: &mut dyn Conn,
    user: i64,
    brands: Option<Vec<String>>,
) -> Result<Vec<String>, Error> {
    let brands = check_brands(&brands.ok_or_else(|| FieldError::missing("brands"))?)?;
    users::set_brands(conn, user, &brands).await?;
    Ok(brands)
}

/// A client an operator registers, checked (`accounts::create_client`).
#[derive(Clone, Debug)]
pub struct NewClient {
    pub name: String,
    pub redirect_uris: Vec<String>,
    pub scopes: Scopes,
    pub default_scopes: Scopes,
    pub grants: Vec<String>,
    /// No secret (PKCE required).
    pub public: bool,
}

/// A registered client: its id and, for a confidential client, its secret, which is shown
/// this once and stored only as its hash.
#[derive(Debug)]
pub struct RegisteredClient {
    pub id: String,
    pub secret: Option<String>,
}

pub async fn register_client(
    conn: &mut dyn Conn,
    client: NewClient,
    now: i64,
) -> Result<RegisteredClient, Error> {
    let id = secret::new_client_id();
    let client_secret = (!client.public).then(secret::new_token);
    let stored = Client {
        id: id.clone(),
        name: client.name,
        secret_hash: client_secret.as_deref().map(secret::hash),
        redirect_uris: client.redirect_uris,
        scopes: client.scopes.to_string(),
        default_scopes: client.default_scopes.to_string(),
        grants: client.grants,
    };
    oauth_store::insert_client(conn, &stored, now).await?;
    Ok(RegisteredClient {
        id,
        secret: client_secret,
    })
}

/// Stores a new confirmation under the hash of a token that no one holds, and returns the
/// hash: the link works only once the mail's sender mints its token (`mail_queue`).
async fn new_link(
    conn: &mut dyn Conn,
    confirmation: &EmailConfirmation,
    now: i64,
) -> Result<String, DbError> {
    let hash = secret::hash(&secret::new_token());
    let expires_at = now + CONFIRMATION_SECONDS;
    oauth_store::insert_confirmation(conn, &hash, confirmation, expires_at).await?;
    Ok(hash)
}
