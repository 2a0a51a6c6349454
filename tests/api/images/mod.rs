//! Images (issue 11): the storage model under them, uploads, renditions and the answers
//! that serve them, on both backends.

mod storage;
