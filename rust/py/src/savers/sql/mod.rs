//! What the SQL savers (`warpgraph.checkpoint._sql`) share: the version codec and its
//! record, and the rows of blobs, writes and metadata.
pub(crate) mod codec;
pub(crate) mod record;
pub(crate) mod rows;
