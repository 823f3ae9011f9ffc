//! MemoryOS's answer prompt: upstream's structure (a role paragraph with the assistant's
//! knowledge and the conversation metadata, then `<CONTEXT>` with the short-term history,
//! `<MEMORY>` with the retrieved pages and their thread summaries, `<USER TRAITS>` with the
//! profile and user knowledge, and the user's words), in our wording ([`render`]) or in
//! upstream's, assembled by upstream's procedure ([`render_upstream`]).

use mb_core::Lang;
use mb_upstream::{MemoryOsAnswer, MemoryOsExchange, MemoryOsPage, Upstream, UpstreamError};

use super::Gathered;

/// The text that replaces the user's last message, in upstream's words.
pub(super) fn render_upstream(
    upstream: &Upstream,
    gathered: &Gathered,
    query: &str,
    lang: Lang,
) -> Result<String, UpstreamError> {
    let history: Vec<MemoryOsExchange> = gathered
        .short_term
        .iter()
        .map(|qa| MemoryOsExchange {
            user: qa.user.clone(),
            assistant: qa.assistant.clone(),
            timestamp: qa.timestamp.clone(),
        })
        .collect();
    let pages: Vec<MemoryOsPage> = gathered
        .pages
        .iter()
        .map(|found| MemoryOsPage {
            user: found.page.qa.user.clone(),
            assistant: found.page.qa.assistant.clone(),
            meta: found.meta.clone(),
        })
        .collect();
    let texts = |items: &[(f32, String)]| items.iter().map(|(_, t)| t.clone()).collect::<Vec<_>>();
    upstream.memoryos_answer(&MemoryOsAnswer {
        lang,
        history: &history,
        pages: &pages,
        profile: gathered.profile.as_deref(),
        user_knowledge: &texts(&gathered.user_knowledge),
        assistant_knowledge: &texts(&gathered.assistant_knowledge),
        query,
    })
}

/// The text that replaces the user's last message.
pub(super) fn render(gathered: &Gathered, query: &str, lang: Lang) -> String {
    let zh = lang == Lang::Zh;
    let bullets = |items: &[(f32, String)]| -> String {
        items.iter().map(|(_, t)| format!("- {t}\n")).collect()
    };
    let assistant_knowledge = if gathered.assistant_knowledge.is_empty() {
        if zh {
            "- 暂无相关知识。\n".to_string()
        } else {
            "- No relevant knowledge found.\n".to_string()
        }
    } else {
        bullets(&gathered.assistant_knowledge)
    };
    let history: String = gathered
        .short_term
        .iter()
        .map(|qa| {
            if zh {
                format!(
                    "用户输入: {}\n你的输出: {}\n(时间: {})\n",
                    qa.user, qa.assistant, qa.timestamp
                )
            } else {
                format!(
                    "User: {}\nAssistant: {}\n(Time: {})\n",
                    qa.user, qa.assistant, qa.timestamp
                )
            }
        })
        .collect();
    let pages: Vec<String> = gathered
        .pages
        .iter()
        .map(|found| {
            let qa = &found.page.qa;
            let mut text = format!("User: {}\nAssistant: {}", qa.user, qa.assistant);
            if !found.meta.is_empty() {
                text.push_str(&format!("\n Dialogue chain info: \n{}", found.meta));
            }
            text
        })
        .collect();
    let memory = format!(
        "{}\n{}",
        if zh {
            "【历史记忆】"
        } else {
            "【Historical Memory】"
        },
        pages.join("\n\n")
    );
    let profile = gathered.profile.clone().unwrap_or_else(|| {
        if zh {
            "暂无详细的用户画像。".into()
        } else {
            "No detailed profile available yet.".into()
        }
    });
    let user_knowledge = if gathered.user_knowledge.is_empty() {
        String::new()
    } else {
        format!(
            "\n{}\n{}",
            if zh {
                "【相关用户知识】"
            } else {
                "【Relevant User Knowledge】"
            },
            bullets(&gathered.user_knowledge)
        )
    };
    if zh {
        format!(
            "你是用户的朋友，拥有长期记忆，像朋友一样自然地与用户交谈，并在合适时运用你的知识。\n\
             【助手知识库】\n{assistant_knowledge}\n用户画像见下文。\n【当前对话元数据】\n本轮未提供。\n\n\n\
             <CONTEXT>\n最近的对话：\n{history}\n<MEMORY>\n{memory}\n\n<USER TRAITS>\n【用户画像】\n{profile}{user_knowledge}\n\n\
             请结合以上记忆，以朋友的身份回复。\n用户刚刚说：{query}"
        )
    } else {
        format!(
            "You are the user's friend with a long memory: talk naturally, as a friend would, and \
             use what you know where it helps.\n【Assistant Knowledge Base】\n{assistant_knowledge}\n\
             The user's profile follows below.\n【Current Conversation Metadata】\nNone provided for this turn.\n\n\n\
             <CONTEXT>\nRecent conversation:\n{history}\n<MEMORY>\n{memory}\n\n<USER TRAITS>\n【User Profile】\n{profile}{user_knowledge}\n\n\
             Reply as the user's friend, drawing on these memories where they are relevant.\nThe user just said: {query}"
        )
    }
}
