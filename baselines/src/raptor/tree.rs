//! Building RAPTOR's tree (vendored `ClusterTreeBuilder.construct_tree`): leaves from the
//! chunks of the documents, then up to five layers, each grouping the layer below
//! ([`crate::cluster::layers`]) and summarizing every group into one parent, until a layer has
//! no more than `dimension + 1` nodes.

use std::sync::Arc;

use mb_core::Lang;
use mb_embed::Embedder;
use mb_llm::LlmStack;

use super::chunk::split_documents;
use super::ops::SummarizeCluster;
use crate::cluster::layers::{group, Grouping};
use crate::error::MemoryError;
use crate::tokens::TokenCounter;

/// Most tokens of a leaf (upstream's `tb_max_tokens`).
pub const LEAF_TOKENS: usize = 100;
/// Most layers above the leaves (upstream's `tb_num_layers`).
pub const MAX_LAYERS: usize = 5;

/// One node of the tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// A chunk of the documents (a leaf) or the summary of its children.
    pub text: String,
    /// Its embedding.
    pub embedding: Vec<f32>,
    /// 0 for a leaf.
    pub layer: usize,
    /// The documents it covers (its own chunk's, or its children's), ascending.
    pub documents: Vec<usize>,
}

/// What a tree is built with.
pub struct Builder<'a> {
    /// Embeds leaves and summaries.
    pub embedder: &'a Arc<dyn Embedder>,
    /// Writes the summaries (the memory role).
    pub llm: &'a LlmStack,
    /// Counts tokens.
    pub tokens: &'a TokenCounter,
    /// How layers are grouped.
    pub grouping: Grouping,
    /// The language of the summaries' prompts.
    pub lang: Lang,
}

impl Builder<'_> {
    /// The tree of `documents`: every node, leaves first, then each layer's.
    pub async fn build(&self, documents: &[String]) -> Result<Vec<Node>, MemoryError> {
        let chunks = split_documents(documents, LEAF_TOKENS, self.tokens);
        let texts: Vec<String> = chunks.iter().map(|c| c.text.clone()).collect();
        let embeddings = self.embed(&texts)?;
        let mut nodes: Vec<Node> = chunks
            .into_iter()
            .zip(embeddings)
            .map(|(chunk, embedding)| Node {
                text: chunk.text,
                embedding,
                layer: 0,
                documents: chunk.documents,
            })
            .collect();
        let mut layer_start = 0;
        for layer in 1..=MAX_LAYERS {
            let below = &nodes[layer_start..];
            if below.len() <= self.grouping.dimension + 1 {
                break;
            }
            let embeddings: Vec<Vec<f32>> = below.iter().map(|n| n.embedding.clone()).collect();
            let tokens: Vec<usize> = below.iter().map(|n| self.tokens.count(&n.text)).collect();
            let groups = group(&embeddings, &tokens, &self.grouping)
                .map_err(|e| MemoryError::Config(format!("RAPTOR's clustering failed: {e}")))?;
            let mut parents = Vec::with_capacity(groups.len());
            for members in &groups {
                let children: Vec<&Node> = members.iter().map(|&m| &below[m]).collect();
                let summary = self
                    .llm
                    .memory
                    .run(
                        &SummarizeCluster::new(joined_text(
                            children.iter().map(|c| c.text.as_str()),
                        )),
                        self.lang,
                    )
                    .await?;
                let mut documents: Vec<usize> = children
                    .iter()
                    .flat_map(|c| c.documents.iter().copied())
                    .collect();
                documents.sort_unstable();
                documents.dedup();
                parents.push((summary, documents));
            }
            let texts: Vec<String> = parents.iter().map(|(text, _)| text.clone()).collect();
            let embeddings = self.embed(&texts)?;
            layer_start = nodes.len();
            nodes.extend(parents.into_iter().zip(embeddings).map(
                |((text, documents), embedding)| Node {
                    text,
                    embedding,
                    layer,
                    documents,
                },
            ));
        }
        Ok(nodes)
    }

    /// Embeddings of `texts`, newlines read as spaces (upstream's embedding models replace
    /// them).
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, MemoryError> {
        let flat: Vec<String> = texts.iter().map(|t| t.replace('\n', " ")).collect();
        let refs: Vec<&str> = flat.iter().map(String::as_str).collect();
        Ok(self.embedder.embed(&refs)?)
    }
}

/// Nodes' texts as RAPTOR hands them on (`get_text`): each on one line, a blank line after
/// each.
pub fn joined_text<'a>(texts: impl IntoIterator<Item = &'a str>) -> String {
    texts
        .into_iter()
        .map(|t| format!("{}\n\n", t.lines().collect::<Vec<_>>().join(" ")))
        .collect()
}
