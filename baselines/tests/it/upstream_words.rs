//! Answers in upstream's own words: with `--upstream`'s wording every system upstream has
//! sends its own answer template, read from the checkout; a system upstream lacks sends the
//! paraphrase and the run says so.

use std::sync::Arc;

use mb_core::Lang;
use mb_datasets::dataset::CorpusFormat;
use mb_llm::{CacheMode, LlmSettings, LlmStack, Message};
use mb_upstream::{AnswerOf, Upstream, Wording};

use crate::common::{context, engine, sample, system};

/// Upstream's checkout beside the project, or `None` after a `skipped:` line (a failure under
/// CI).
fn upstream() -> Option<Upstream> {
    Some(Upstream::open(&mb_core::test_data::upstream_checkout()?).unwrap())
}

/// Offline roles whose prompts are in `wording`.
fn roles(wording: Wording) -> Arc<LlmStack> {
    let stack = LlmStack::build(&LlmSettings::default(), CacheMode::Off, None).unwrap();
    Arc::new(stack.with_wording(wording))
}

/// The template of `of` split where its context and question go: what comes before the
/// context, between the two, and after the question.
fn frame(upstream: &Upstream, of: AnswerOf) -> (String, String, String) {
    let text = upstream.answer(of, Lang::En, "\u{1}", "\u{2}").unwrap();
    let (before, rest) = text.split_once('\u{1}').unwrap();
    let (between, after) = rest.split_once('\u{2}').unwrap();
    (before.into(), between.into(), after.into())
}

#[tokio::test]
async fn every_upstream_system_answers_in_its_own_template() {
    let Some(checkout) = upstream() else { return };
    let (conversation, qa) = sample();
    let question = qa[0].0.clone();
    let systems = [
        ("wo_memory", AnswerOf::LongContext),
        ("bm25_message", AnswerOf::Bm25),
        ("bm25_dialog", AnswerOf::Bm25Dialog),
        ("embedder_message", AnswerOf::Embedder),
        ("embedder_dialog", AnswerOf::EmbedderDialog),
        ("a_mem", AnswerOf::AMem),
        ("mem0", AnswerOf::Mem0),
    ];
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(dir.path());
    let wording = Wording::upstream(Upstream::open(checkout.dir()).unwrap());
    let llm = roles(wording.clone());
    for (name, of) in systems {
        let memory = system(name, context(engine.clone(), name, llm.clone()));
        memory
            .memorize_corpus(&conversation, CorpusFormat::Locomo)
            .await
            .unwrap();
        let answered = memory
            .answer(&[Message::user(question.clone())], Lang::En, 3)
            .await
            .unwrap();
        let sent = &answered.messages.last().unwrap().content;
        let (before, between, after) = frame(&checkout, of);
        assert!(sent.starts_with(&before), "{name}: {sent}");
        assert!(
            sent.ends_with(&format!("{between}{question}{after}")),
            "{name}: {sent}"
        );
    }
    assert!(wording.paraphrased_prompts().is_empty());
    assert!(wording
        .provenance()
        .contains(&mb_upstream::KNOWN_COMMIT[..12]));
}

#[tokio::test]
async fn a_system_upstream_lacks_is_named_as_paraphrased() {
    let Some(checkout) = upstream() else { return };
    let (conversation, qa) = sample();
    let dir = tempfile::tempdir().unwrap();
    let wording = Wording::upstream(checkout);
    let hybrid = system(
        "hybrid",
        context(engine(dir.path()), "h", roles(wording.clone())),
    );
    hybrid
        .memorize_corpus(&conversation, CorpusFormat::Locomo)
        .await
        .unwrap();
    hybrid
        .answer(&[Message::user(qa[0].0.clone())], Lang::En, 3)
        .await
        .unwrap();
    let provenance = wording.take_provenance();
    assert!(provenance.contains("paraphrased"), "{provenance}");
    assert!(provenance.contains("beyond upstream"), "{provenance}");
    // Taken: the next run starts afresh.
    assert!(!wording.provenance().contains("paraphrased"));
}

/// A-Mem's note analysis goes out as upstream's client sends it: its system message, the
/// prompt with the note appended, temperature 0.7, 2000 tokens and no top-p.
#[tokio::test]
async fn a_mems_note_analysis_is_sent_as_upstreams_client_sends_it() {
    let Some(checkout) = upstream() else { return };
    let scripted = mb_llm::testing::ScriptedProvider::then_always(
        &[],
        "{\"keywords\": [\"tile\"], \"context\": \"A gift.\", \"tags\": [\"travel\"]}",
    );
    let wording = Wording::upstream(checkout);
    let backend =
        mb_llm::ops::Backend::model(scripted.clone(), mb_llm::ops::OutputHandling::Upstream, 0)
            .with_wording(wording.clone());
    let note = "Nadia brought back a blue tile from Lisbon.";
    let attributes = backend
        .run(&mb_baselines::amem::ops::AnalyzeNote::new(note), Lang::Zh)
        .await
        .unwrap();
    assert_eq!(attributes.keywords, ["tile"]);
    let request = &scripted.requests()[0];
    let [system, prompt] =
        <[_; 2]>::try_from(wording.checkout().unwrap().amem_analyze_note(note).unwrap())
            .unwrap()
            .map(|message| message.content);
    assert_eq!(request.messages[0].content, system);
    assert_eq!(request.messages[1].content, prompt);
    assert!(prompt.ends_with(note));
    assert_eq!(request.sampling.top_p, None);
    assert_eq!(
        (request.sampling.temperature, request.sampling.max_tokens),
        (0.7, 2000)
    );
    assert!(wording.paraphrased_prompts().is_empty());
}

/// MemoryOS's continuity check goes out as upstream's client sends it: its system message and
/// prompt, temperature 0 and no top-p; its chain summary likewise at temperature 0.3, and its
/// profile analysis at 0.1 with the stored profile as upstream gives it.
#[tokio::test]
async fn memoryos_chain_operations_are_sent_as_upstreams_client_sends_them() {
    use mb_baselines::memoryos::ops::{Exchange, IsContinuous, MetaSummary};
    let Some(checkout) = upstream() else { return };
    let scripted = mb_llm::testing::ScriptedProvider::then_always(&[], "true");
    let wording = Wording::upstream(checkout);
    let backend =
        mb_llm::ops::Backend::model(scripted.clone(), mb_llm::ops::OutputHandling::Upstream, 0)
            .with_wording(wording.clone());
    let exchange = |user: &str, assistant: &str| Exchange {
        user: user.into(),
        assistant: assistant.into(),
    };
    let previous = exchange("Lisbon?", "Yes.");
    let current = exchange("What did you bring?", "A tile.");
    let continuous = backend
        .run(&IsContinuous::new(previous, current.clone()), Lang::En)
        .await
        .unwrap();
    assert!(continuous);
    backend
        .run(&MetaSummary::new(None, current), Lang::Zh)
        .await
        .unwrap();
    let profile = mb_baselines::memoryos::ops::UpdateProfile::new(
        Some("Likes tea".into()),
        vec![exchange("What did you bring?", "A tile.")],
    );
    backend.run(&profile, Lang::En).await.unwrap();
    let requests = scripted.requests();
    assert!(requests[2].messages[1]
        .content
        .contains("{\"raw_text_profile\": \"Likes tea\"}"));
    assert_eq!(requests[2].sampling.temperature, 0.1);
    for (request, temperature) in requests.iter().zip([0.0, 0.3, 0.1]) {
        assert_eq!(request.messages.len(), 2);
        assert_eq!(request.messages[0].role, mb_llm::Role::System);
        assert!(request.messages[1].content.contains("What did you bring?"));
        assert_eq!(request.sampling.top_p, None);
        assert_eq!(request.sampling.temperature, temperature);
    }
    assert!(wording.paraphrased_prompts().is_empty());
}

/// MemoryOS's knowledge extraction in upstream's words: upstream's prompt goes out, and the
/// reply is read under upstream's headings, the parts upstream's memory refuses dropped.
#[tokio::test]
async fn memoryos_knowledge_is_asked_and_read_as_upstream_does() {
    use mb_baselines::memoryos::ops::{Exchange, ExtractKnowledge};
    let Some(checkout) = upstream() else { return };
    let (user, assistant) = checkout.memoryos_knowledge_markers().unwrap();
    let reply = format!("{user}\n- Has a cat named Miso\n{assistant}\nNone");
    let scripted = mb_llm::testing::ScriptedProvider::then_always(&[], &reply);
    let wording = Wording::upstream(Upstream::open(checkout.dir()).unwrap());
    let backend =
        mb_llm::ops::Backend::model(scripted.clone(), mb_llm::ops::OutputHandling::Upstream, 0)
            .with_wording(wording.clone());
    let operation = ExtractKnowledge::new(vec![Exchange {
        user: "My cat Miso purrs.".into(),
        assistant: "Cats purr when content.".into(),
    }])
    .with_upstream_markers((user, assistant));
    let knowledge = backend.run(&operation, Lang::En).await.unwrap();
    assert_eq!(
        knowledge.user_private.as_deref(),
        Some("- Has a cat named Miso")
    );
    assert_eq!(knowledge.assistant, None);
    let request = &scripted.requests()[0];
    assert_eq!(request.messages[0].role, mb_llm::Role::System);
    assert!(request.messages[1]
        .content
        .contains("User: My cat Miso purrs."));
    assert_eq!(request.sampling.top_p, None);
    assert!(wording.paraphrased_prompts().is_empty());
}
