//! The downloader on its own (`souk::images::fetch`), against the test's image server.

use std::net::IpAddr;
use std::time::{Duration, Instant};

use souk::images::fetch::address::{AllowList, Refused};
use souk::images::fetch::{FetchError, FetchPolicy, fetch, fetch_all};

use super::ImageServer;

const PHOTO: &[u8] = b"\xFF\xD8\xFF\xE0 pretend this is a JPEG";

fn policy(allow: &[&str]) -> FetchPolicy {
    FetchPolicy {
        max_bytes: 64 * 1024,
        timeout: Duration::from_secs(2),
        total: Duration::from_secs(30),
        max_redirects: 3,
        allow: AllowList::parse(allow.iter().copied()).expect("allow-list"),
    }
}

fn refused(error: Result<impl std::fmt::Debug, FetchError>) -> (IpAddr, Refused) {
    match error {
        Err(FetchError::Refused { address, why }) => (address, why),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn an_allow_listed_server_on_loopback_is_fetched_from() {
    let server = ImageServer::start(PHOTO.to_vec()).await;
    let by_name = policy(&[&server.allow_entry()]);
    let image = fetch(&by_name, &server.url("/photo.jpg")).await.unwrap();
    assert_eq!(&image.bytes[..], PHOTO);
    assert_eq!(image.content_type.as_deref(), Some("image/jpeg"));

    // A network in the allow-list lets in every address of it, by address or by name.
    let by_network = policy(&["127.0.0.0/8"]);
    let url = format!("http://127.0.0.1:{}/photo.jpg", server.port);
    assert_eq!(&fetch(&by_network, &url).await.unwrap().bytes[..], PHOTO);
    assert_eq!(server.photo_hits(), 2);
}

#[tokio::test]
async fn loopback_is_refused_without_the_allow_list_by_address_and_by_name() {
    let server = ImageServer::start(PHOTO.to_vec()).await;
    let nothing_allowed = policy(&[]);
    let port = server.port;
    for url in [
        format!("http://127.0.0.1:{port}/photo.jpg"),
        format!("http://127.1:{port}/photo.jpg"),
        format!("http://2130706433:{port}/photo.jpg"),
        format!("http://0x7f000001:{port}/photo.jpg"),
        format!("http://[::ffff:127.0.0.1]:{port}/photo.jpg"),
        // A name is judged by what it resolves to, when connecting.
        format!("http://localhost:{port}/photo.jpg"),
        format!("http://LocalHost:{port}/photo.jpg"),
    ] {
        let (address, why) = refused(fetch(&nothing_allowed, &url).await);
        assert_eq!(why, Refused::Loopback, "{url}");
        assert!(address.is_loopback() || address.to_string() == "::ffff:127.0.0.1");
    }
    // An allow-list entry names one host and port: another port of the same host, or the
    // same server by another name, is still refused.
    let other = ImageServer::start(PHOTO.to_vec()).await;
    let just_other = policy(&[&other.allow_entry()]);
    refused(fetch(&just_other, &server.url("/photo.jpg")).await);
    refused(
        fetch(
            &just_other,
            &format!("http://127.0.0.1:{}/photo.jpg", other.port),
        )
        .await,
    );
    assert_eq!(
        server.photo_hits() + other.photo_hits(),
        0,
        "nothing connected"
    );
}

#[tokio::test]
async fn private_link_local_and_metadata_addresses_are_refused_before_connecting() {
    let nothing_allowed = policy(&[]);
    for (url, why) in [
        (
            "http://169.254.169.254/latest/meta-data/",
            Refused::CloudMetadata,
        ),
        ("http://[fd00:ec2::254]/latest/", Refused::CloudMetadata),
        ("http://100.100.100.200/latest/", Refused::CloudMetadata),
        ("http://10.0.0.1/a.jpg", Refused::Private),
        ("http://192.168.1.1/a.jpg", Refused::Private),
        ("https://172.16.5.4/a.jpg", Refused::Private),
        ("http://[fd12::1]/a.jpg", Refused::Private),
        ("http://169.254.1.1/a.jpg", Refused::LinkLocal),
        ("http://[fe80::1]/a.jpg", Refused::LinkLocal),
        ("http://100.64.1.1/a.jpg", Refused::SharedCgnat),
        ("http://0.0.0.0/a.jpg", Refused::Unspecified),
        ("http://[::]/a.jpg", Refused::Unspecified),
        ("http://255.255.255.255/a.jpg", Refused::Broadcast),
    ] {
        let started = Instant::now();
        assert_eq!(refused(fetch(&nothing_allowed, url).await).1, why, "{url}");
        // Refused at once: no connection was tried (10.0.0.1 would take the time limit).
        assert!(started.elapsed() < Duration::from_millis(500), "{url}");
    }
}

#[tokio::test]
async fn every_redirect_target_is_checked_again() {
    let server = ImageServer::start(PHOTO.to_vec()).await;
    let just_server = policy(&[&server.allow_entry()]);
    let port = server.port;
    for (target, why) in [
        (
            format!("http://127.0.0.1:{port}/photo.jpg"),
            Refused::Loopback,
        ),
        (
            "http://169.254.169.254/latest/meta-data/".to_owned(),
            Refused::CloudMetadata,
        ),
        ("http://[::1]/photo.jpg".to_owned(), Refused::Loopback),
        ("http://10.1.2.3/photo.jpg".to_owned(), Refused::Private),
    ] {
        let url = server.url(&format!("/redirect?to={target}"));
        assert_eq!(refused(fetch(&just_server, &url).await).1, why, "{target}");
    }
    assert_eq!(server.photo_hits(), 0);
    // Allowed hops are followed.
    let via_redirect = server.url(&format!("/redirect?to={}", server.url("/photo.jpg")));
    let image = fetch(&just_server, &via_redirect).await.unwrap();
    assert_eq!(image.url.as_str(), server.url("/photo.jpg"));
}

#[tokio::test]
async fn redirects_are_bounded() {
    let server = ImageServer::start(PHOTO.to_vec()).await;
    let three = policy(&[&server.allow_entry()]);
    assert_eq!(
        &fetch(&three, &server.url("/hops/3")).await.unwrap().bytes[..],
        PHOTO
    );
    for path in ["/hops/4", "/loop"] {
        let error = fetch(&three, &server.url(path)).await.unwrap_err();
        assert_eq!(error, FetchError::TooManyRedirects { limit: 3 }, "{path}");
    }
}

#[tokio::test]
async fn a_slow_answer_or_a_slow_body_is_given_up_at_the_time_limit() {
    let server = ImageServer::start(PHOTO.to_vec()).await;
    let mut quick = policy(&[&server.allow_entry()]);
    quick.timeout = Duration::from_secs(1);
    for path in ["/slow", "/slow-body"] {
        let started = Instant::now();
        let error = fetch(&quick, &server.url(path)).await.unwrap_err();
        assert_eq!(error, FetchError::TooSlow, "{path}");
        assert!(started.elapsed() < Duration::from_millis(1500), "{path}");
    }
}

/// An import's URLs together take at most the policy's total time: eight slow URLs, four
/// at a time at two seconds each, took four seconds; the total of one ends them all.
#[tokio::test]
async fn an_import_is_given_up_at_its_total_time() {
    let server = ImageServer::start(PHOTO.to_vec()).await;
    let mut bounded = policy(&[&server.allow_entry()]);
    bounded.total = Duration::from_secs(1);
    let urls = vec![server.url("/slow"); 8];
    let started = Instant::now();
    let errors = fetch_all(&bounded, &urls).await.unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(errors.len(), 8);
    for (i, error) in errors.iter().enumerate() {
        assert_eq!(error.fields, [format!("urls[{i}]")]);
        assert_eq!(error.code, "too-slow");
    }
}

#[tokio::test]
async fn what_is_not_an_image_or_too_large_or_not_there_is_refused() {
    let server = ImageServer::start(PHOTO.to_vec()).await;
    let just_server = policy(&[&server.allow_entry()]);
    assert_eq!(
        fetch(&just_server, &server.url("/page.html"))
            .await
            .unwrap_err(),
        FetchError::NotAnImage {
            content_type: "text/html; charset=utf-8".into()
        }
    );
    for path in ["/big", "/big-chunked"] {
        assert_eq!(
            fetch(&just_server, &server.url(path)).await.unwrap_err(),
            FetchError::TooLarge { limit: 64 * 1024 },
            "{path}"
        );
    }
    assert_eq!(
        fetch(&just_server, &server.url("/missing"))
            .await
            .unwrap_err(),
        FetchError::Status(404)
    );
    // Nothing listens on a port that was just let go.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed_port = closed.local_addr().unwrap().port();
    drop(closed);
    let url = format!("http://127.0.0.1:{closed_port}/photo.jpg");
    assert_eq!(
        fetch(&policy(&["127.0.0.0/8"]), &url).await.unwrap_err(),
        FetchError::NotAnswering
    );
}

/// The fetcher takes a server's word that an answer is an image; whether the bytes are one
/// is for the checks that uploads go through (which see the claimed type too).
#[tokio::test]
async fn the_bytes_are_handed_on_with_the_type_the_server_claimed() {
    let server = ImageServer::start(PHOTO.to_vec()).await;
    let just_server = policy(&[&server.allow_entry()]);
    let fake = fetch(&just_server, &server.url("/fake.jpg")).await.unwrap();
    assert_eq!(&fake.bytes[..], b"<html>not an image</html>");
    assert_eq!(fake.content_type.as_deref(), Some("image/jpeg"));
    let mislabelled = fetch(&just_server, &server.url("/mislabelled.png"))
        .await
        .unwrap();
    assert_eq!(&mislabelled.bytes[..], PHOTO);
    assert_eq!(mislabelled.content_type.as_deref(), Some("image/png"));
}

#[tokio::test]
async fn only_http_and_https_urls_are_fetched() {
    let server = ImageServer::start(PHOTO.to_vec()).await;
    let just_server = policy(&[&server.allow_entry()]);
    for url in [
        "ftp://example.com/a.jpg",
        "file:///etc/passwd",
        "not a url",
        "/photo.jpg",
        "gopher://127.0.0.1:70/",
        "data:image/jpeg;base64,/9j/",
    ] {
        assert_eq!(
            fetch(&just_server, url).await.unwrap_err(),
            FetchError::InvalidUrl,
            "{url}"
        );
    }
    let to_file = server.url("/redirect?to=file:///etc/passwd");
    assert_eq!(
        fetch(&just_server, &to_file).await.unwrap_err(),
        FetchError::InvalidUrl
    );
}

#[tokio::test]
async fn every_failing_url_of_a_request_gets_a_field_error() {
    let server = ImageServer::start(PHOTO.to_vec()).await;
    let just_server = policy(&[&server.allow_entry()]);
    let urls = vec![
        server.url("/photo.jpg"),
        server.url("/page.html"),
        server.url("/hops/2"),
        format!("http://127.0.0.1:{}/photo.jpg", server.port),
        server.url("/loop"),
    ];
    let errors = fetch_all(&just_server, &urls).await.unwrap_err();
    let found: Vec<(String, &str)> = errors
        .iter()
        .map(|e| (e.fields.join(","), e.code))
        .collect();
    assert_eq!(
        found,
        [
            ("urls[1]".to_owned(), "not-an-image"),
            ("urls[3]".to_owned(), "address-refused"),
            ("urls[4]".to_owned(), "too-many-redirects"),
        ]
    );
    assert_eq!(errors[1].value, Some(urls[3].clone().into()));

    let fine = [server.url("/photo.jpg"), server.url("/hops/1")];
    let images = fetch_all(&just_server, &fine).await.unwrap();
    assert_eq!(images.len(), 2);
    assert!(images.iter().all(|image| &image.bytes[..] == PHOTO));
}
