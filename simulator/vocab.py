"""The fixed vocabularies shared by scenario files, traces and checks."""

from __future__ import annotations

REQUEST_TYPES: tuple[str, ...] = (
    "chit_chat", "quick_fact", "knowledge_qa", "multi_hop_reasoning", "calculation", "web_search",
    "weather", "flight_search", "restaurant_booking", "calendar_event", "reminder", "email_draft",
    "shopping_order", "coding_task", "code_explain", "summarization", "translation",
    "recommendation", "personal_fact",
)

PATTERNS: tuple[str, ...] = (
    "single_request", "request_then_chat", "refine_running", "replace_running", "cancel_running",
    "cancel_then_restore", "progress_query", "barge_in_delivery", "backchannel_during_delivery",
    "stop_speaking", "mid_sentence_pause", "self_correction", "multi_task_parallel", "batch_request",
    "side_talk", "follow_up_on_result", "slow_delegate", "delegate_failure", "missing_info",
    "duplicate_request", "memory_durable_vs_task", "evidence_expiry", "history_reset",
)

CHECKS: tuple[str, ...] = (
    "delivered", "never_heard", "no_task", "task_count", "responded_directly", "acknowledged",
    "progress_given", "asked_for", "reported_failure", "yielded", "kept_speaking", "no_takeover",
    "no_overlap", "memory_used", "forgotten", "memory_recalled", "one_off_not_kept", "saved_after_write",
)

MODULES: tuple[str, ...] = ("policy", "intake", "hold", "worker", "deliver", "memory")
