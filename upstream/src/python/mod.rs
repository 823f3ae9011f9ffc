//! Reading Python source without running it: the string literals of a file, where each stands,
//! and each one's value.

mod dict;
mod json;
mod literal;
mod repr;
mod scan;
mod text;

pub use dict::{str_list_dict, StrListEntry};
pub use json::{ascii_string, dumps_unicode, profile_argument, profile_text};
pub use literal::{Literal, LiteralError, Piece};
pub use repr::{repr_dict_list, repr_float, repr_json, repr_str, repr_str_list};
pub use scan::{string_runs, Binding, ScanError, StringRun};
pub(crate) use text::strip_pieces;
pub use text::{fixed, is_space, strip, strip_chars};
