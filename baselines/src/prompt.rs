//! Upstream's "RAG template": the memory context, then the user's input, then an instruction
//! to answer from it, in English or Chinese. The layout is upstream's; the instruction
//! sentence is our wording.

use mb_core::Lang;
use mb_llm::Message;

/// `messages` with the last message's content replaced by the template filled with `context`
/// and that content (earlier messages, e.g. a system prompt, are kept).
pub fn rag_prompt(messages: &[Message], context: &str, lang: Lang) -> Vec<Message> {
    let mut prompt = messages.to_vec();
    if let Some(last) = prompt.last_mut() {
        last.content = rag_text(context, &last.content, lang);
    }
    prompt
}

/// The template itself.
pub fn rag_text(context: &str, question: &str, lang: Lang) -> String {
    match lang {
        Lang::En => format!(
            "Context:\n{context}\n\nUser: \n{question}\n\n\
             Reply to the user's input naturally and appropriately, basing the reply on the context given."
        ),
        Lang::Zh => format!(
            "相关知识：\n{context}\n\n用户输入：\n{question}\n\n请依据以上相关知识，自然、恰当地回复用户的输入。"
        ),
    }
}

/// The sentence asking for output in the prompt's language.
pub(crate) fn language_line(lang: Lang) -> &'static str {
    match lang {
        Lang::En => "Write in English.",
        Lang::Zh => "请用中文书写（JSON 键名保持英文）。",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_message_carries_context_then_question() {
        let messages = vec![
            Message::system("You are a judge."),
            Message::user("What happened?"),
        ];
        let prompt = rag_prompt(&messages, "a\nb", Lang::En);
        assert_eq!(prompt[0], messages[0]);
        assert!(prompt[1]
            .content
            .starts_with("Context:\na\nb\n\nUser: \nWhat happened?\n\n"));
        let zh = rag_text("知识", "问题", Lang::Zh);
        assert!(zh.starts_with("相关知识：\n知识\n\n用户输入：\n问题\n\n"));
    }
}
