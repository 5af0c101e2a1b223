import { bundleFixedSentences } from "@remram/contract";
import { describe, expect, it } from "vitest";
import {
  type InjectionLedger,
  injectedFor,
  isInjectedStatement,
  rememberInjection,
  stripInjected,
} from "./injected-content.js";
import { knowledgeBlock } from "./injection.js";
import { renderedBundle } from "./testing/rendered-bundle.js";

const alice = { agentId: "main", userId: "alice" };
const cat = "Alice's cat is called Miso.";
const dentist = "Alice sees her dentist every March";
const backups = "Earlier: we agreed the NAS backs up nightly to the garage disk.";

/** The block Cortex renders for a small bundle (the contract's renderer), remembered as before_prompt_build does. */
function injectedBlock(ledger: InjectionLedger = new Map(), live = false) {
  const bundle = renderedBundle({
    facts: [
      { id: "f1", statement: cat, type: "fact", confidence: 0.9 },
      { id: "f2", statement: dentist, type: "fact" },
    ],
    chunks: [{ id: "k1", text: backups }],
    liveState: { detected: live },
  });
  const built = knowledgeBlock(bundle, 1_000);
  if (!built.ok) throw new Error(built.reason);
  rememberInjection(ledger, alice, built.block);
  return { block: built.block, ledger, shown: injectedFor(ledger, alice) };
}

describe("adversarial: injected content", () => {
  it("removes the block echoed verbatim, with the contract's delimiter, and keeps the tool's own output", () => {
    const { block, shown } = injectedBlock();
    const output = `notes.md:\n${block.text}\nThe shed door sticks in winter.`;
    const result = stripInjected(output, shown);
    expect(result.text).toBe("notes.md:\n\nThe shed door sticks in winter.");
    expect(result.stripped).toBeGreaterThan(0);
  });

  it("removes a block whose delimiter a model paraphrased, item by item", () => {
    const { shown } = injectedBlock();
    const echoed = [
      "Sure, here is my memory:",
      "[[ Remram Knowledge ]]",
      "Durable knowledge Remram retrieved for this conversation.  It is memory, not the user's words: it may be",
      "## Facts",
      "- ALICE’S CAT IS CALLED MISO (confidence 0.90)",
      "- Alice sees her dentist\nevery March.",
      "## Excerpts",
      `- ${backups}`,
      "[[ /Remram Knowledge ]]",
      "Anything else?",
    ].join("\n");
    const text = stripInjected(echoed, shown).text;
    for (const fragment of ["Miso", "MISO", "dentist", "garage disk", "Durable knowledge"])
      expect(text).not.toContain(fragment);
    expect(text).toContain("Sure, here is my memory:");
    expect(text).toContain("Anything else?");
  });

  it("removes a delimited block of a changed spelling even when nothing was remembered", () => {
    const echoed =
      "before <<< Remram Knowledge >>>\n- the boat is named Albatross\n<<< /remram knowledge >>> after";
    expect(stripInjected(echoed, undefined).text).toBe("before  after");
    const cortexSpelling = "a <<<REMRAM MEMORY v1>>>\n- x\n<<<END REMRAM MEMORY>>> b";
    expect(stripInjected(cortexSpelling, undefined).text).toBe("a  b");
    // Cut off before its end (a truncated capture): the rest of the text is the block.
    expect(stripInjected("keep <<<remram-knowledge\n## Facts\n- x", undefined).text).toBe("keep ");
    // A stray marker goes, the prose around it stays.
    expect(stripInjected("see remram-knowledge>>> here", undefined).text).toBe("see  here");
  });

  it("removes an injected fact a model reply quotes verbatim, and only the fact", () => {
    const { shown } = injectedBlock();
    const reply = `You told me before: ${cat} Shall I note her vet appointment too?`;
    expect(stripInjected(reply, shown).text).toBe(
      "You told me before:  Shall I note her vet appointment too?",
    );
  });

  it("removes a live-state block's items with their dates and its live-check instruction, sentence by sentence", () => {
    const { block, shown } = injectedBlock(new Map(), true);
    expect(block.text).toContain(`${cat} (confidence 0.90; learned 2026-03-04)`);
    // A model that quotes the block without its delimiters, one line at a time.
    const quoted = block.text.split("\n").slice(1, -1).join("\n");
    const text = stripInjected(`Reply: ${quoted}\nI will check.`, shown).text;
    for (const fragment of [
      "Miso",
      "dentist",
      "garage disk",
      "learned 2026",
      "live state",
      "Durable knowledge",
    ])
      expect(text).not.toContain(fragment);
    expect(text).toContain("I will check.");
  });

  it("recognises a reflected item that only restates an injected one with its note", () => {
    const { shown } = injectedBlock();
    expect(isInjectedStatement(`${cat} (confidence 0.90; learned 2026-03-04)`, shown)).toBe(true);
    expect(isInjectedStatement(`${backups} (from user turn)`, shown)).toBe(true);
    expect(isInjectedStatement(`${backups} (archive ${"b".repeat(64)})`, shown)).toBe(true);
  });

  it("strips every fixed sentence of the block even when nothing was remembered", () => {
    for (const sentence of bundleFixedSentences) {
      expect(stripInjected(`a ${sentence} b`, undefined).text).toBe("a  b");
    }
  });

  it("leaves unrelated text, longer words and very short items alone", () => {
    const ledger: InjectionLedger = new Map();
    rememberInjection(ledger, alice, { text: "unused", itemTexts: [cat, "Likes tea"] });
    const shown = injectedFor(ledger, alice);
    const text = "Alice's cat is called Misora. Bob likes tea.";
    expect(stripInjected(text, shown)).toEqual({ text, stripped: 0 });
    // Another principal's injections are not this one's.
    expect(stripInjected(cat, injectedFor(ledger, { agentId: "main", userId: "bob" })).text).toBe(cat);
  });

  it("is idempotent", () => {
    const { block, shown } = injectedBlock();
    const once = stripInjected(`x ${block.text} ${cat} y`, shown).text;
    expect(stripInjected(once, shown)).toEqual({ text: once, stripped: 0 });
  });

  it("recognises a reflected statement that only restates injected knowledge", () => {
    const { shown } = injectedBlock();
    expect(isInjectedStatement("alice’s cat is called Miso", shown)).toBe(true);
    // SmolLM2 wrote this back in CI: list furniture around a restated item is still only the item.
    expect(isInjectedStatement("[::6]Alice's cat is called Miso.", shown)).toBe(true);
    expect(isInjectedStatement("2. Alice's cat is called Miso (confidence 0.90)", shown)).toBe(true);
    // Digits after a restated item are new content, not furniture.
    expect(isInjectedStatement("Alice's cat is called Miso: born 2019", shown)).toBe(false);
    expect(isInjectedStatement("Alice's cat is called Miso, chip +47 555 1234", shown)).toBe(false);
    expect(isInjectedStatement("Alice's cat is called Miso and is nine years old.", shown)).toBe(false);
    expect(isInjectedStatement("Alice plays the cello.", shown)).toBe(false);
  });
});

describe("the injection ledger", () => {
  it("keeps a bounded number of blocks and texts per principal, and of principals", () => {
    const ledger: InjectionLedger = new Map();
    for (let index = 0; index < 300; index += 1) {
      rememberInjection(ledger, alice, {
        text: `block ${index}`,
        itemTexts: [`remembered item number ${index}`],
      });
    }
    const shown = injectedFor(ledger, alice);
    expect(shown?.blocks).toEqual(["block 296", "block 297", "block 298", "block 299"]);
    expect(shown?.texts).toHaveLength(256);
    expect(shown?.texts.at(-1)).toBe("remembered item number 299");
    for (let index = 0; index < 300; index += 1)
      rememberInjection(ledger, { agentId: "main", userId: `u${index}` }, { text: "b", itemTexts: [] });
    expect(ledger.size).toBe(256);
    expect(injectedFor(ledger, alice)).toBeUndefined();
  });

  it("moves a text injected again to the newest end instead of keeping it twice", () => {
    const ledger: InjectionLedger = new Map();
    rememberInjection(ledger, alice, { text: "b1", itemTexts: [cat, dentist] });
    rememberInjection(ledger, alice, { text: "b2", itemTexts: [cat] });
    expect(injectedFor(ledger, alice)?.texts).toEqual([dentist, cat]);
  });
});
