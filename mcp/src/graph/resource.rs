//! The whole graph as a resource, `memory://knowledge-graph`, as the reference server exposes
//! it (JSON indented by two spaces, `application/json`).

use rmcp::model::{ErrorData, ReadResourceResult, Resource, ResourceContents};

use crate::graph::store::GraphStore;

/// The resource's URI.
pub const URI: &str = "memory://knowledge-graph";

/// The resource as listed.
pub fn listed() -> Resource {
    Resource::new(URI, "knowledge-graph")
        .with_title("Knowledge Graph")
        .with_description("The full knowledge graph with all entities and relations")
        .with_mime_type("application/json")
}

/// Reads `uri`: the graph, or a not-found error for any other URI.
pub fn read(store: &GraphStore, uri: &str) -> Result<ReadResourceResult, ErrorData> {
    if uri != URI {
        return Err(ErrorData::resource_not_found(
            format!("unknown resource {uri:?} (this server has {URI})"),
            None,
        ));
    }
    // The whole graph, within the reply bound (the read_graph tool pages a larger one).
    let graph = store
        .read(|g| g.read_page(None))
        .and_then(|page| page)
        .map_err(|e| ErrorData::invalid_request(e.to_string(), None))?;
    let text = serde_json::to_string_pretty(&graph.graph)
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    Ok(ReadResourceResult::new(vec![ResourceContents::text(
        text, URI,
    )
    .with_mime_type("application/json")]))
}
