//! The bytes of images, in an object store: the local filesystem under the data directory
//! by default, S3-compatible storage when configured (replicas then share the images).
//!
//! Two kinds of object: an upload's original, kept under `originals/{mediaId}` only until
//! its renditions exist (it may carry a GPS position), and renditions, stored once per
//! content under `blobs/{sha256}` (two identical renditions are one blob; the database
//! counts their references, `store::renditions`).

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures_util::TryStreamExt;
use object_store::aws::AmazonS3Builder;
use object_store::local::LocalFileSystem;
use object_store::path::Path as Key;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

/// The folder of the originals, kept until their image's renditions exist.
const ORIGINALS: &str = "originals";
/// The object in which a store keeps its id (`Blobs::mark`).
const STORE_ID: &str = "souk-store-id";

/// Where blobs are kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlobConfig {
    /// A folder (created if missing).
    Local(std::path::PathBuf),
    /// An S3 bucket; `endpoint` for S3-compatible servers other than AWS.
    S3 {
        bucket: String,
        region: String,
        endpoint: Option<String>,
        access_key_id: Option<String>,
        secret_access_key: Option<String>,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum BlobError {
    #[error("no such blob")]
    NotFound,
    #[error("blob store: {0}")]
    Store(String),
}

impl From<object_store::Error> for BlobError {
    fn from(error: object_store::Error) -> BlobError {
        match error {
            object_store::Error::NotFound { .. } => BlobError::NotFound,
            other => BlobError::Store(other.to_string()),
        }
    }
}

/// The object store of images. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Blobs {
    store: Arc<dyn ObjectStore>,
    hot: Arc<Mutex<HotBlobs>>,
    /// The folder of a local store, where a write cut short leaves a file of its own.
    local_dir: Option<PathBuf>,
}

/// Renditions read lately, kept in memory up to a total size: a blob's name is its
/// content, so a kept copy is never stale, and the same few pictures of a busy page are
/// served without a file or S3 read each (FIFO: simple, and as good as LRU for this).
#[derive(Debug, Default)]
struct HotBlobs {
    kept: HashMap<String, Bytes>,
    order: VecDeque<String>,
    size: usize,
}

/// The most bytes [`HotBlobs`] keeps, and the largest blob it keeps.
const HOT_BYTES: usize = 64 * 1024 * 1024;
const HOT_LARGEST: usize = 2 * 1024 * 1024;

impl HotBlobs {
    fn get(&self, sha256: &str) -> Option<Bytes> {
        self.kept.get(sha256).cloned()
    }

    fn keep(&mut self, sha256: &str, bytes: &Bytes) {
        if bytes.len() > HOT_LARGEST || self.kept.contains_key(sha256) {
            return;
        }
        while self.size + bytes.len() > HOT_BYTES {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            if let Some(gone) = self.kept.remove(&oldest) {
                self.size -= gone.len();
            }
        }
        self.size += bytes.len();
        self.kept.insert(sha256.to_owned(), bytes.clone());
        self.order.push_back(sha256.to_owned());
    }

    fn forget(&mut self, sha256: &str) {
        if let Some(gone) = self.kept.remove(sha256) {
            self.size -= gone.len();
            self.order.retain(|kept| kept != sha256);
        }
    }
}

impl Blobs {
    pub fn open(config: &BlobConfig) -> Result<Blobs, BlobError> {
        let (store, local_dir): (Arc<dyn ObjectStore>, _) = match config {
            BlobConfig::Local(dir) => {
                std::fs::create_dir_all(dir)
                    .map_err(|e| BlobError::Store(format!("{}: {e}", dir.display())))?;
                // Synced before a write returns, as SQLite syncs its commits: an image
                // answered 201 (and the rendition rows pointing at its files) must not come
                // back after a power cut as a missing or empty file.
                let store = LocalFileSystem::new_with_prefix(dir)?.with_fsync(true);
                (Arc::new(store), Some(dir.clone()))
            }
            BlobConfig::S3 {
                bucket,
                region,
                endpoint,
                access_key_id,
                secret_access_key,
            } => {
                use_ring_for_tls();
                let mut builder = AmazonS3Builder::new()
                    .with_bucket_name(bucket)
                    .with_region(region);
                if access_key_id.is_none() {
                    builder = with_environment_credentials(builder);
                }
                if let Some(endpoint) = endpoint {
                    builder = builder
                        .with_endpoint(endpoint)
                        .with_allow_http(endpoint.starts_with("http://"));
                }
                if let Some(key) = access_key_id {
                    builder = builder.with_access_key_id(key);
                }
                if let Some(secret) = secret_access_key {
                    builder = builder.with_secret_access_key(secret);
                }
                (Arc::new(builder.build()?), None)
            }
        };
        Ok(Blobs {
            store,
            hot: Arc::default(),
            local_dir,
        })
    }

    /// The local store under `data_dir/images`.
    pub fn local(data_dir: &Path) -> Result<Blobs, BlobError> {
        Blobs::open(&BlobConfig::Local(data_dir.join("images")))
    }

    fn original_key(media_id: &str) -> Key {
        Key::from(format!("{ORIGINALS}/{media_id}"))
    }

    fn blob_key(sha256: &str) -> Key {
        Key::from(format!("blobs/{}/{sha256}", &sha256[..2.min(sha256.len())]))
    }

    /// Keeps an upload's original until its renditions exist; returns its key.
    pub async fn put_original(&self, media_id: &str, bytes: Bytes) -> Result<String, BlobError> {
        let key = Blobs::original_key(media_id);
        self.store.put(&key, PutPayload::from(bytes)).await?;
        Ok(key.to_string())
    }

    pub async fn get_original(&self, key: &str) -> Result<Bytes, BlobError> {
        Ok(self.store.get(&Key::from(key)).await?.bytes().await?)
    }

    /// Deletes an original (gone already is fine).
    pub async fn delete_original(&self, key: &str) -> Result<(), BlobError> {
        ignore_missing(self.store.delete(&Key::from(key)).await)
    }

    /// Stores a rendition under its SHA-256 (storing the same bytes again is harmless).
    pub async fn put_blob(&self, sha256: &str, bytes: Bytes) -> Result<(), BlobError> {
        self.store
            .put(&Blobs::blob_key(sha256), PutPayload::from(bytes))
            .await?;
        Ok(())
    }

    pub async fn get_blob(&self, sha256: &str) -> Result<Bytes, BlobError> {
        if let Some(bytes) = self.hot().get(sha256) {
            return Ok(bytes);
        }
        let bytes = self
            .store
            .get(&Blobs::blob_key(sha256))
            .await?
            .bytes()
            .await?;
        self.hot().keep(sha256, &bytes);
        Ok(bytes)
    }

    fn hot(&self) -> std::sync::MutexGuard<'_, HotBlobs> {
        // A panic while holding the lock cannot leave the map inconsistent with its size
        // in a way that matters more than a lost entry: take it back.
        self.hot
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The id this store keeps of itself ([`Blobs::mark`]), if it was given one.
    pub async fn store_id(&self) -> Result<Option<String>, BlobError> {
        match self.store.get(&Key::from(STORE_ID)).await {
            Ok(got) => {
                let bytes = got.bytes().await?;
                Ok(Some(String::from_utf8_lossy(&bytes).trim().to_owned()))
            }
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Gives the store the id `id` unless it has one; returns the id it has then (of
    /// servers marking one store at once, one wins). Where the store cannot create an
    /// object only if it is absent (an S3 service without conditional writes), the mark
    /// is written all the same.
    pub async fn mark(&self, id: &str) -> Result<String, BlobError> {
        let key = Key::from(STORE_ID);
        let bytes = || Bytes::copy_from_slice(id.as_bytes()).into();
        let create = object_store::PutOptions::from(object_store::PutMode::Create);
        match self.store.put_opts(&key, bytes(), create).await {
            Ok(_) => Ok(id.to_owned()),
            Err(object_store::Error::AlreadyExists { .. }) => match self.store_id().await? {
                Some(theirs) => Ok(theirs),
                None => Err(BlobError::Store("the store's id vanished".into())),
            },
            Err(object_store::Error::NotImplemented { .. }) => {
                self.store.put(&key, bytes()).await?;
                Ok(id.to_owned())
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Whether the store holds any image's file (anything but its id).
    pub async fn holds_files(&self) -> Result<bool, BlobError> {
        let mut listed = self.store.list(None);
        while let Some(meta) = listed.try_next().await? {
            if meta.location.as_ref() != STORE_ID {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The keys of the images' files (`originals/...`, `blobs/...`), sorted: for an
    /// operator's check, and for the tests that show an action stored nothing.
    pub async fn keys(&self) -> Result<Vec<String>, BlobError> {
        let mut keys: Vec<String> = self
            .store
            .list(None)
            .map_ok(|meta| meta.location.to_string())
            .try_filter(|key| std::future::ready(key != STORE_ID))
            .try_collect()
            .await?;
        keys.sort();
        Ok(keys)
    }

    /// The keys of the originals stored before `before` (seconds since the epoch), sorted.
    pub async fn originals_stored_before(&self, before: i64) -> Result<Vec<String>, BlobError> {
        let mut keys: Vec<String> = self
            .store
            .list(Some(&Key::from(ORIGINALS)))
            .try_filter(|meta| std::future::ready(meta.last_modified.timestamp() < before))
            .map_ok(|meta| meta.location.to_string())
            .try_collect()
            .await?;
        keys.sort();
        Ok(keys)
    }

    /// Deletes the files that writes cut short left in a local store, last changed before
    /// `before` (seconds since the epoch); returns their paths. The local store writes a
    /// file as `{name}#{n}` and renames it when whole, so a crash in between leaves that
    /// file, which listings pass over: the start of an original, with its GPS position,
    /// would stay for ever. An S3 object appears whole or not at all: nothing to do there.
    pub async fn delete_interrupted_writes(&self, before: i64) -> Result<Vec<String>, BlobError> {
        let Some(dir) = self.local_dir.clone() else {
            return Ok(Vec::new());
        };
        let cutoff = std::time::UNIX_EPOCH + std::time::Duration::from_secs(before.max(0) as u64);
        tokio::task::spawn_blocking(move || {
            let mut deleted = Vec::new();
            let mut folders = vec![dir];
            while let Some(folder) = folders.pop() {
                for entry in std::fs::read_dir(&folder)? {
                    let entry = entry?;
                    let path = entry.path();
                    if entry.file_type()?.is_dir() {
                        folders.push(path);
                        continue;
                    }
                    if !is_cut_short(&path) {
                        continue;
                    }
                    // A write may finish (rename its file) or a sweep delete it meanwhile.
                    match entry.metadata().and_then(|m| m.modified()) {
                        Ok(modified) if modified < cutoff => {}
                        Ok(_) => continue,
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                        Err(e) => return Err(e),
                    }
                    match std::fs::remove_file(&path) {
                        Ok(()) => deleted.push(path.display().to_string()),
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        Err(e) => return Err(e),
                    }
                }
            }
            Ok(deleted)
        })
        .await
        .map_err(|e| BlobError::Store(e.to_string()))?
        .map_err(|e: std::io::Error| BlobError::Store(e.to_string()))
    }

    /// Deletes a rendition's bytes (gone already is fine).
    pub async fn delete_blob(&self, sha256: &str) -> Result<(), BlobError> {
        self.hot().forget(sha256);
        ignore_missing(self.store.delete(&Blobs::blob_key(sha256)).await)
    }
}

/// Whether a local store's file is one being written: its name ends in `#` and digits.
fn is_cut_short(path: &Path) -> bool {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    name.rsplit_once('#')
        .is_some_and(|(_, suffix)| !suffix.is_empty() && suffix.bytes().all(|b| b.is_ascii_digit()))
}

fn ignore_missing(result: object_store::Result<()>) -> Result<(), BlobError> {
    match result {
        Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
        Err(other) => Err(other.into()),
    }
}

/// The environment's AWS credentials, read as `AmazonS3Builder::from_env` reads them, and
/// only those: `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` with `AWS_SESSION_TOKEN`, an
/// ECS task's role (`AWS_CONTAINER_CREDENTIALS_*`), an EKS web identity
/// (`AWS_WEB_IDENTITY_TOKEN_FILE`, `AWS_ROLE_ARN`). The other `AWS_*` settings (an
/// endpoint, unsigned requests, certificates left unchecked) would change where and how
/// Souk stores its images behind its own settings' back.
fn with_environment_credentials(mut builder: AmazonS3Builder) -> AmazonS3Builder {
    use object_store::aws::AmazonS3ConfigKey as Key;
    // `vars_os`: `vars` panics on a variable that is not UTF-8.
    for (name, value) in std::env::vars_os() {
        let (Some(name), Some(value)) = (name.to_str(), value.to_str()) else {
            continue;
        };
        if !name.starts_with("AWS_") {
            continue;
        }
        let Ok(key) = name.to_ascii_lowercase().parse::<Key>() else {
            continue;
        };
        if matches!(
            key,
            Key::AccessKeyId
                | Key::SecretAccessKey
                | Key::Token
                | Key::MetadataEndpoint
                | Key::ContainerCredentialsRelativeUri
                | Key::ContainerCredentialsFullUri
                | Key::ContainerAuthorizationTokenFile
                | Key::WebIdentityTokenFile
                | Key::RoleArn
                | Key::RoleSessionName
                | Key::StsEndpoint
        ) {
            builder = builder.with_config(key, value);
        }
    }
    builder
}

/// Makes ring the process's TLS provider (rustls): Souk's HTTP clients (S3 here) are built
/// without one of their own (see Cargo.toml). Call before building a `reqwest::Client`;
/// a provider installed before is kept.
pub fn use_ring_for_tls() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// The SHA-256 of some bytes, in lower-case hex: a blob's name and its strong `ETag`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hot_blobs_keep_at_most_their_size_oldest_out_first() {
        let mut hot = HotBlobs::default();
        let blob = Bytes::from(vec![0u8; HOT_LARGEST]);
        let fits = HOT_BYTES / HOT_LARGEST;
        for n in 0..=fits {
            hot.keep(&n.to_string(), &blob);
        }
        assert_eq!(hot.size, fits * HOT_LARGEST);
        assert!(hot.get("0").is_none(), "the oldest went");
        assert!(hot.get(&fits.to_string()).is_some());
        hot.keep("large", &Bytes::from(vec![0u8; HOT_LARGEST + 1]));
        assert!(hot.get("large").is_none(), "too large to keep");
        hot.forget("1");
        assert_eq!(hot.size, (fits - 1) * HOT_LARGEST);
        assert_eq!(hot.order.len(), fits - 1);
    }

    /// Whether a read found nothing stored under its key.
    fn gone(read: Result<Bytes, BlobError>) -> bool {
        matches!(read, Err(BlobError::NotFound))
    }

    #[tokio::test]
    async fn local_blobs_round_trip_and_delete() {
        let dir = tempfile::tempdir().unwrap();
        let blobs = Blobs::local(dir.path()).unwrap();
        let sha = sha256_hex(b"bytes");
        blobs
            .put_blob(&sha, Bytes::from_static(b"bytes"))
            .await
            .unwrap();
        assert_eq!(blobs.get_blob(&sha).await.unwrap(), "bytes");
        blobs.delete_blob(&sha).await.unwrap();
        assert!(
            gone(blobs.get_blob(&sha).await),
            "not served from memory once deleted"
        );
        blobs.delete_blob(&sha).await.unwrap();
        let key = blobs
            .put_original("0190-x", Bytes::from_static(b"original"))
            .await
            .unwrap();
        assert_eq!(blobs.get_original(&key).await.unwrap(), "original");
        blobs.delete_original(&key).await.unwrap();
        assert!(gone(blobs.get_original(&key).await));
    }
}
