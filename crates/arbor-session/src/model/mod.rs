//! The model of one loaded session: its entries and their typed shapes, ids,
//! the entry tree, the flattened /tree view, the model's context and the
//! tool calls by id.

pub mod calls;
pub mod context;
pub mod entry;
mod id_index;
pub mod ids;
mod js_sort;
pub mod tree;
pub mod types;
pub mod view;
