//! Reading a large graph in pages, and the byte bound on one reply (issue 76, D3).
//!
//! `read_graph` and `search_nodes` take an optional `limit` and `cursor`. With neither, the
//! reply is the reference server's, whole, unless its text exceeds
//! [`GraphBounds::max_reply_bytes`](crate::limits::GraphBounds): then the call fails saying so
//! and how to page. With either, the reply is one page and, unless it is the last, a
//! `nextCursor` to pass back.
//!
//! A `read_graph` page holds up to `limit` items: entities in creation order, then relations
//! in creation order. A `search_nodes` page holds up to `limit` matching entities with the
//! relations touching them (a relation touching entities of two pages is in both). A page also
//! stops before the item that would take its text over the reply bound, but always holds at
//! least one, so paging makes progress. A cursor names the first item not yet returned by its
//! serial: items created meanwhile appear in later pages, deleted ones are skipped, and no
//! item is returned twice.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::McpError;
use crate::graph::model::{Entity, KnowledgeGraph, Relation};
use crate::graph::node::Node;
use crate::graph::ops::Graph;
use crate::graph::query::copied;
use crate::graph::size::{self, TextBytes};
use crate::limits;

/// The first item a page has not returned yet: what `nextCursor` says, opaque to clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cursor {
    /// The entity of this serial, or the first after it.
    Entity(u32),
    /// The relation of this serial, or the first after it (every entity was returned).
    Relation(u32),
}

impl Cursor {
    /// The cursor's text, as `nextCursor` carries it.
    pub fn encode(self) -> String {
        match self {
            Cursor::Entity(serial) => format!("e{serial}"),
            Cursor::Relation(serial) => format!("r{serial}"),
        }
    }

    /// Reads a cursor a reply gave; anything else is an invalid `cursor`.
    pub fn parse(text: &str) -> Result<Cursor, McpError> {
        let invalid = || {
            McpError::invalid(
                "cursor",
                format!("{text:?} is not a cursor this server gave (pass a reply's nextCursor)"),
            )
        };
        let (kind, serial) = text.split_at_checked(1).ok_or_else(invalid)?;
        let serial: u32 = serial.parse().map_err(|_| invalid())?;
        match kind {
            "e" => Ok(Cursor::Entity(serial)),
            "r" => Ok(Cursor::Relation(serial)),
            _ => Err(invalid()),
        }
    }
}

/// What a paged read asks for: where to go on and how much to return.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest {
    /// Where the previous page stopped; `None` for the first page.
    pub cursor: Option<Cursor>,
    /// Most items (`read_graph`) or entities (`search_nodes`) in the page.
    pub limit: usize,
}

impl PageRequest {
    /// The page a call's `cursor` and `limit` ask for; `None` (the whole reply) when neither is
    /// given.
    pub fn from_args(
        cursor: Option<&str>,
        limit: Option<u32>,
    ) -> Result<Option<PageRequest>, McpError> {
        if cursor.is_none() && limit.is_none() {
            return Ok(None);
        }
        let limit = match limit {
            None => limits::DEFAULT_GRAPH_PAGE,
            Some(n) if (1..=limits::MAX_GRAPH_PAGE as u32).contains(&n) => n as usize,
            Some(n) => {
                return Err(McpError::invalid(
                    "limit",
                    format!("{n} is outside 1..={}", limits::MAX_GRAPH_PAGE),
                ))
            }
        };
        let cursor = cursor.map(Cursor::parse).transpose()?;
        Ok(Some(PageRequest { cursor, limit }))
    }
}

/// A reply of `read_graph` or `search_nodes`: the graph (or a page of it) and, for a page that
/// is not the last, the cursor of the next.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GraphPage {
    /// The entities and relations.
    #[serde(flatten)]
    pub graph: KnowledgeGraph,
    /// Where the next page starts (absent on the last page and on a whole reply).
    #[serde(
        rename = "nextCursor",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub next_cursor: Option<String>,
}

/// The bytes of text a page may still take.
struct Budget {
    left: usize,
    empty: bool,
}

impl Budget {
    /// Takes `bytes` if they fit, or if the page is still empty (a page holds at least one).
    fn take(&mut self, bytes: usize) -> bool {
        if bytes > self.left && !self.empty {
            return false;
        }
        self.left = self.left.saturating_sub(bytes);
        self.empty = false;
        true
    }
}

impl Graph {
    /// `read_graph`: the whole graph (refused over the reply bound), or one page of it.
    pub fn read_page(&self, page: Option<PageRequest>) -> Result<GraphPage, McpError> {
        let Some(page) = page else {
            self.check_reply("read_graph", self.text_bytes())?;
            return Ok(GraphPage {
                graph: self.snapshot(),
                next_cursor: None,
            });
        };
        let (entity_from, relation_from) = match page.cursor {
            None => (0, 0),
            Some(Cursor::Entity(serial)) => (serial, 0),
            Some(Cursor::Relation(serial)) => (u32::MAX, serial),
        };
        let mut budget = self.budget();
        let mut out = GraphPage::default();
        for node in from_serial(&self.entities, entity_from) {
            if out.graph.entities.len() == page.limit || !budget.take(node.value.text_bytes()) {
                out.next_cursor = Some(Cursor::Entity(node.serial).encode());
                return Ok(out);
            }
            out.graph.entities.push(node.value.clone());
        }
        for node in from_serial(&self.relations, relation_from) {
            let taken = out.graph.entities.len() + out.graph.relations.len();
            if taken == page.limit || !budget.take(node.value.text_bytes()) {
                out.next_cursor = Some(Cursor::Relation(node.serial).encode());
                return Ok(out);
            }
            out.graph.relations.push(node.value.clone());
        }
        Ok(out)
    }

    /// `search_nodes`: every match with the relations touching them (refused over the reply
    /// bound), or one page of matches.
    pub fn search_page(
        &self,
        query: &str,
        page: Option<PageRequest>,
    ) -> Result<GraphPage, McpError> {
        let matches = self.matching(query);
        let Some(page) = page else {
            return self.whole("search_nodes", matches);
        };
        let from = match page.cursor {
            None => 0,
            Some(Cursor::Entity(serial)) => serial,
            Some(Cursor::Relation(_)) => {
                return Err(McpError::invalid(
                    "cursor",
                    "a read_graph cursor; search_nodes pages by entity",
                ))
            }
        };
        let mut budget = self.budget();
        let mut chosen: Vec<&Node<Entity>> = Vec::new();
        let mut next_cursor = None;
        for &node in matches.iter().filter(|n| n.serial >= from) {
            // An entity with its relations (counted with each entity they touch).
            let bytes = size::total(self.touching(&[node]).into_iter().map(|r| &r.value))
                .saturating_add(node.value.text_bytes());
            if chosen.len() == page.limit || !budget.take(bytes) {
                next_cursor = Some(Cursor::Entity(node.serial).encode());
                break;
            }
            chosen.push(node);
        }
        Ok(GraphPage {
            graph: self.graph_of(chosen),
            next_cursor,
        })
    }

    /// `open_nodes`: the named entities with the relations touching them (refused over the
    /// reply bound).
    pub fn open_page(&self, names: &[String]) -> Result<GraphPage, McpError> {
        self.whole("open_nodes", self.named(names))
    }

    /// The given entities with their relations as one reply, if its text is within bounds
    /// (counted before anything is copied).
    fn whole(&self, tool: &str, nodes: Vec<&Node<Entity>>) -> Result<GraphPage, McpError> {
        let relations: Vec<&Node<Relation>> = self.touching(&nodes);
        let bytes = size::total(nodes.iter().map(|n| &n.value))
            .saturating_add(size::total(relations.iter().map(|r| &r.value)));
        self.check_reply(tool, bytes)?;
        Ok(GraphPage {
            graph: copied(nodes, relations),
            next_cursor: None,
        })
    }

    fn budget(&self) -> Budget {
        Budget {
            left: self.bounds().max_reply_bytes,
            empty: true,
        }
    }

    /// Fails when a whole reply of `bytes` of text exceeds the reply bound, saying how to page.
    fn check_reply(&self, tool: &str, bytes: usize) -> Result<(), McpError> {
        let max = self.bounds().max_reply_bytes;
        if bytes > max {
            return Err(McpError::Limit(format!(
                "{tool}: the reply would hold {bytes} bytes of text, more than the maximum of \
                 {max} (--max-reply-bytes); read it in pages with `limit` and `cursor`"
            )));
        }
        Ok(())
    }
}

/// The nodes of `nodes` (sorted by serial) from the first whose serial is `serial` or more.
fn from_serial<T>(nodes: &[Node<T>], serial: u32) -> &[Node<T>] {
    let start = nodes.partition_point(|n| n.serial < serial);
    nodes.get(start..).unwrap_or_default()
}

#[cfg(test)]
#[path = "page_tests.rs"]
mod tests;
