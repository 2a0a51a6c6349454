//! Images without HTTP or SQL: where their bytes are kept (`blobs`: the local filesystem
//! or S3, through `object_store`), what an upload must be (`check`), the import by URL
//! (`fetch`), and how the renditions are made (`render`). The use case `usecase::images`
//! ties them to the store.

pub mod blobs;
pub mod check;
pub mod fetch;
pub mod render;
