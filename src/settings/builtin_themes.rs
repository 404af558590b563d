//! Atomic's six built-in themes, as far as arbor draws with them: the
//! values of the tokens it reads (`TOKENS`), their variables resolved.
//! Taken from Atomic's `src/modes/interactive/theme/*.json`; a test
//! checks that every one parses.

/// The Atomic colour tokens arbor reads, in the order of each theme's
/// values below (and of `ui::theme::Palette`'s fields).
pub const TOKENS: [&str; 11] = [
    "accent",
    "border",
    "borderAccent",
    "success",
    "error",
    "warning",
    "muted",
    "dim",
    "selectedBg",
    "customMessageLabel",
    "mdHeading",
];

/// Each built-in theme's name and its values of [`TOKENS`].
pub const BUILTIN: [(&str, [&str; 11]); 6] = [
    (
        "dark",
        [
            "#8abeb7", "#5f87ff", "#00d7ff", "#b5bd68", "#cc6666", "#ffff00", "#808080", "#666666",
            "#3a3a4a", "#9575cd", "#f0c674",
        ],
    ),
    (
        "light",
        [
            "#5a8080", "#547da7", "#5a8080", "#588458", "#aa5555", "#9a7326", "#6c6c6c", "#767676",
            "#d0d0e0", "#7e57c2", "#9a7326",
        ],
    ),
    (
        "catppuccin-frappe",
        [
            "#ca9ee6", "#51576d", "#babbf1", "#a6d189", "#e78284", "#e5c890", "#b5bfe2", "#838ba7",
            "#51576d", "#ca9ee6", "#ca9ee6",
        ],
    ),
    (
        "catppuccin-latte",
        [
            "#8839ef", "#bcc0cc", "#7287fd", "#40a02b", "#d20f39", "#df8e1d", "#5c5f77", "#8c8fa1",
            "#bcc0cc", "#8839ef", "#8839ef",
        ],
    ),
    (
        "catppuccin-macchiato",
        [
            "#c6a0f6", "#494d64", "#b7bdf8", "#a6da95", "#ed8796", "#eed49f", "#b8c0e0", "#8087a2",
            "#494d64", "#c6a0f6", "#c6a0f6",
        ],
    ),
    (
        "catppuccin-mocha",
        [
            "#89b4fa", "#6c7086", "#89b4fa", "#a6e3a1", "#f38ba8", "#f9e2af", "#a6adc8", "#7f849c",
            "#45475a", "#cba6f7", "#cba6f7",
        ],
    ),
];

/// Every colour token an Atomic theme file must define (Atomic refuses a
/// file missing any; so does arbor, so that both agree on what is broken).
pub const REQUIRED: [&str; 51] = [
    "accent",
    "border",
    "borderAccent",
    "borderMuted",
    "success",
    "error",
    "warning",
    "muted",
    "dim",
    "text",
    "thinkingText",
    "selectedBg",
    "userMessageBg",
    "userMessageText",
    "customMessageBg",
    "customMessageText",
    "customMessageLabel",
    "toolPendingBg",
    "toolSuccessBg",
    "toolErrorBg",
    "toolTitle",
    "toolOutput",
    "mdHeading",
    "mdLink",
    "mdLinkUrl",
    "mdCode",
    "mdCodeBlock",
    "mdCodeBlockBorder",
    "mdQuote",
    "mdQuoteBorder",
    "mdHr",
    "mdListBullet",
    "toolDiffAdded",
    "toolDiffRemoved",
    "toolDiffContext",
    "syntaxComment",
    "syntaxKeyword",
    "syntaxFunction",
    "syntaxVariable",
    "syntaxString",
    "syntaxNumber",
    "syntaxType",
    "syntaxOperator",
    "syntaxPunctuation",
    "thinkingOff",
    "thinkingMinimal",
    "thinkingLow",
    "thinkingMedium",
    "thinkingHigh",
    "thinkingXhigh",
    "bashMode",
];
