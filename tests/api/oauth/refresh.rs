//! Refresh tokens: rotation and scope, twenty live per user and client, reuse revokes the
//! family, and spent ones are forgotten.

use serde_json::json;
use souk::accounts::ClientSpec;

use super::{EMAIL, PASSWORD, authorize_query, one_wins_and_the_family_is_revoked, refresh};
use crate::both_backends;
use crate::helpers::{TestApp, expect_json, expect_oauth_error};

both_backends!(
    refresh_rotation_and_scope,
    twenty_live_refresh_tokens_per_user_and_client,
    refresh_reuse_revokes_the_family,
    a_refresh_token_presented_at_once_revokes_the_family,
    spent_tokens_are_forgotten,
    a_token_rotated_late_in_life_still_revokes_its_family,
);

/// Case 25 (but the 20-token rule, below).
async fn refresh_rotation_and_scope(app: TestApp) {
    app.create_user(EMAIL, PASSWORD).await;
    let client = app.app_client.clone();
    let (_, first) = app
        .user_token(&client, EMAIL, PASSWORD, Some("read write"))
        .await;
    let refreshed = refresh(&app, &client, &first, None).await;
    // Case 28 for the refresh grant too.
    assert_eq!(refreshed.headers()["cache-control"], "no-store");
    assert_eq!(refreshed.headers()["pragma"], "no-cache");
    let body = expect_json(refreshed, 200).await;
    assert_eq!(
        (&body["token_type"], &body["expires_in"]),
        (&json!("bearer"), &json!(86_400))
    );
    let second = body["refresh_token"].as_str().unwrap().to_owned();
    assert_ne!(second, first);
    assert_eq!(body["scope"], "read write");
    // Narrower is fine and does not narrow the next refresh; wider is invalid_scope.
    let body = expect_json(refresh(&app, &client, &second, Some("read")).await, 200).await;
    assert_eq!(body["scope"], "read");
    let third = body["refresh_token"].as_str().unwrap().to_owned();
    expect_oauth_error(
        refresh(&app, &client, &third, Some("read write purchase")).await,
        400,
        "invalid_scope",
    )
    .await;
    let body = expect_json(refresh(&app, &client, &third, None).await, 200).await;
    assert_eq!(body["scope"], "read write");
    // Another client's refresh token.
    let other = app
        .register_client(ClientSpec {
            name: "Other".into(),
            redirect_uris: vec!["https://other.test/cb".into()],
            ..ClientSpec::default()
        })
        .await;
    let fourth = body["refresh_token"].as_str().unwrap();
    expect_oauth_error(
        refresh(&app, &other, fourth, None).await,
        400,
        "invalid_grant",
    )
    .await;
    expect_json(refresh(&app, &client, fourth, None).await, 200).await;
}

/// Case 25: 21 logins of one user at one client. Presenting the discarded refresh token is
/// `invalid_grant` and nothing more (oauth.md): the access token issued with it still
/// works, and so does every other token.
async fn twenty_live_refresh_tokens_per_user_and_client(app: TestApp) {
    app.create_user(EMAIL, PASSWORD).await;
    let client = app.app_client.clone();
    let mut tokens = Vec::new();
    let mut first_access = None;
    for _ in 0..21 {
        let (access, refresh_token) = app.user_token(&client, EMAIL, PASSWORD, None).await;
        first_access.get_or_insert(access);
        tokens.push(refresh_token);
    }
    expect_oauth_error(
        refresh(&app, &client, &tokens[0], None).await,
        400,
        "invalid_grant",
    )
    .await;
    let first_access = first_access.unwrap();
    assert_eq!(app.get_with("/v1/me", &first_access).await.status(), 302);
    for token in &tokens[1..] {
        expect_json(refresh(&app, &client, token, None).await, 200).await;
    }
}

/// Case 26.
async fn refresh_reuse_revokes_the_family(app: TestApp) {
    app.create_user(EMAIL, PASSWORD).await;
    let client = app.app_client.clone();
    let (_, first) = app.user_token(&client, EMAIL, PASSWORD, None).await;
    let body = expect_json(refresh(&app, &client, &first, None).await, 200).await;
    let (access, second) = (
        body["access_token"].as_str().unwrap().to_owned(),
        body["refresh_token"].as_str().unwrap().to_owned(),
    );
    // An unrelated login of the same user stays valid.
    let (other_access, other_refresh) = app.user_token(&client, EMAIL, PASSWORD, None).await;
    expect_oauth_error(
        refresh(&app, &client, &first, None).await,
        400,
        "invalid_grant",
    )
    .await;
    expect_oauth_error(
        refresh(&app, &client, &second, None).await,
        400,
        "invalid_grant",
    )
    .await;
    assert_eq!(app.get_with("/v1/me", &access).await.status(), 401);
    assert_eq!(app.get_with("/v1/me", &other_access).await.status(), 302);
    expect_json(refresh(&app, &client, &other_refresh, None).await, 200).await;
}

/// Case 26 at one moment: of two refreshes with one token (a double click, two tabs), one
/// rotates it and the other is reuse, which revokes the family, so the winner's new tokens
/// stop working too. On PostgreSQL the loser once failed without revoking anything when it
/// read the token before the winner committed. Ten rounds, since a round may not overlap.
async fn a_refresh_token_presented_at_once_revokes_the_family(app: TestApp) {
    app.create_user(EMAIL, PASSWORD).await;
    let client = app.app_client.clone();
    for _ in 0..10 {
        let (_, first) = app.user_token(&client, EMAIL, PASSWORD, None).await;
        let answers = tokio::join!(
            refresh(&app, &client, &first, None),
            refresh(&app, &client, &first, None)
        );
        one_wins_and_the_family_is_revoked(&app, &client, answers).await;
    }
}

/// The hourly upkeep deletes what nothing needs: access tokens, codes and sign-in sessions
/// a day after they expired, failed sign-ins once no lockout counts them, spent refresh
/// tokens 30 days after they were issued; live ones stay and work.
async fn spent_tokens_are_forgotten(app: TestApp) {
    app.create_user(EMAIL, PASSWORD).await;
    let client = app.app_client.clone();
    let failed = app
        .sign_in(&authorize_query(&client, ""), EMAIL, "a wrong password")
        .await;
    assert_eq!(failed.status(), 200, "the sign-in page again");
    let (_, first) = app.user_token(&client, EMAIL, PASSWORD, None).await;
    let body = expect_json(refresh(&app, &client, &first, None).await, 200).await;
    let live = body["refresh_token"].as_str().unwrap().to_owned();
    let (access, codes, refresh_tokens) = (
        app.count_rows("access_tokens").await,
        app.count_rows("authorization_codes").await,
        app.count_rows("refresh_tokens").await,
    );
    let (sessions, failures) = (
        app.count_rows("browser_sessions").await,
        app.count_rows("login_failures").await,
    );
    assert!(access >= 2 && codes >= 1 && refresh_tokens == 2);
    // The one sign-in's session (a visit of the sign-in page stores none).
    assert!(sessions == 1 && failures >= 1, "{sessions} {failures}");
    // Nothing is due yet.
    assert_eq!(
        souk::app::forget_spent_tokens(&app.db, app.clock.now())
            .await
            .unwrap(),
        0
    );
    // A day after the access tokens and the sessions expired: they, the code and the
    // failed sign-in go, the refresh tokens stay.
    app.clock.advance(2 * 86_400 + 1);
    let gone = souk::app::forget_spent_tokens(&app.db, app.clock.now())
        .await
        .unwrap();
    assert_eq!(gone as i64, access + codes + sessions + failures);
    assert_eq!(app.count_rows("refresh_tokens").await, 2);
    assert_eq!(app.count_rows("browser_sessions").await, 0);
    assert_eq!(app.count_rows("login_failures").await, 0);
    // 30 days after it was issued, the rotated token goes; the live one stays and works.
    app.clock.advance(29 * 86_400);
    assert_eq!(
        souk::app::forget_spent_tokens(&app.db, app.clock.now())
            .await
            .unwrap(),
        1
    );
    assert_eq!(app.count_rows("refresh_tokens").await, 1);
    // Unknown now, refused all the same.
    let reused = refresh(&app, &client, &first, None).await;
    expect_oauth_error(reused, 400, "invalid_grant").await;
    expect_json(refresh(&app, &client, &live, None).await, 200).await;
}

/// A refresh token used for the first time after 30 days (stolen, say) is kept as rotated
/// for 30 days from then: the hourly upkeep does not forget it, and its reuse revokes the
/// family. (Counted from its issue, it was forgotten within the hour, and the thief's new
/// token lived on.)
async fn a_token_rotated_late_in_life_still_revokes_its_family(app: TestApp) {
    app.create_user(EMAIL, PASSWORD).await;
    let client = app.app_client.clone();
    let (_, first) = app.user_token(&client, EMAIL, PASSWORD, None).await;
    app.clock.advance(31 * 86_400);
    let body = expect_json(refresh(&app, &client, &first, None).await, 200).await;
    let second = body["refresh_token"].as_str().unwrap().to_owned();
    souk::app::forget_spent_tokens(&app.db, app.clock.now())
        .await
        .unwrap();
    let reused = refresh(&app, &client, &first, None).await;
    expect_oauth_error(reused, 400, "invalid_grant").await;
    let revoked = refresh(&app, &client, &second, None).await;
    expect_oauth_error(revoked, 400, "invalid_grant").await;
}
