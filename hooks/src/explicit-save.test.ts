import { describe, expect, it } from "vitest";
import {
  classifySave,
  cleanStatement,
  detectExplicitSave,
  maxStatementChars,
  ownWords,
  previousUserText,
} from "./explicit-save.js";

describe("detectExplicitSave: directives", () => {
  it.each([
    ["Remember that I like my coffee black.", "I like my coffee black", "preference"],
    ["remember that I take my coffee black", "I take my coffee black", "fact"],
    ["Please remember that I'm allergic to peanuts.", "I'm allergic to peanuts", "fact"],
    ["Remember: the wifi is called Bluebird", "The wifi is called Bluebird", "fact"],
    ["Remember this: the gate code is at the garage", "The gate code is at the garage", "fact"],
    ["Hey Remram, remember that my sister is called Ada.", "My sister is called Ada", "fact"],
    ["ok so remember my bike is the red one", "My bike is the red one", "fact"],
    ["Can you remember that I prefer tea?", "I prefer tea", "preference"],
    ["Could you please remember that we decided to use Postgres?", "We decided to use Postgres", "decision"],
    ["I'd like you to remember that the cat is called Miso.", "The cat is called Miso", "fact"],
    ["Don't forget that the meeting is on Tuesdays.", "The meeting is on Tuesdays", "fact"],
    ["do not forget: I hate cilantro", "I hate cilantro", "preference"],
    ["Keep in mind that I'm vegetarian.", "I'm vegetarian", "fact"],
    ["Memorize this: my locker is number 42", "My locker is number 42", "fact"],
    ["Make a note that the plumber comes on Friday.", "The plumber comes on Friday", "fact"],
    ["Remember to always answer me in English.", "Always answer me in English", "constraint"],
    ["Remember never to call me before 9.", "Never to call me before 9", "constraint"],
    ["Remember: never put the wok in the dishwasher", "Never put the wok in the dishwasher", "constraint"],
    ["Save this: the boiler pressure should be 1.5 bar", "The boiler pressure should be 1.5 bar", "fact"],
    ["REMEMBER THAT I AM ALLERGIC TO CATS", "I AM ALLERGIC TO CATS", "fact"],
  ])("%s", (message, statement, type) => {
    expect(detectExplicitSave(message)).toEqual({
      statement,
      intent: "remember",
      scope: "user",
      type,
      refersBack: false,
    });
  });

  it("takes only the directive's sentence, not the question after it", () => {
    expect(detectExplicitSave("Remember that my car is blue. What's the weather today?")?.statement).toBe(
      "My car is blue",
    );
    expect(detectExplicitSave("What's up? Remember that my car is blue")?.statement).toBe("My car is blue");
  });

  it("takes the paragraph after a colon", () => {
    const message = "Remember this: the boiler code is 4711. It is on the side panel.\n\nAlso, how are you?";
    expect(detectExplicitSave(message)?.statement).toBe("The boiler code is 4711. It is on the side panel.");
  });

  it("saves the text before a bare directive in the same message", () => {
    expect(detectExplicitSave("The garage code is 4711. Save this.")).toMatchObject({
      statement: "The garage code is 4711",
      refersBack: false,
    });
    expect(detectExplicitSave("My locker is 42 — remember this!")?.statement).toBe("My locker is 42");
    expect(detectExplicitSave("The spare key is in the shed. Write that down, please.")?.statement).toBe(
      "The spare key is in the shed",
    );
  });

  it("refers back to the previous message when the directive names nothing", () => {
    for (const message of [
      "Save this.",
      "save that",
      "Please write this down",
      "Add this to your memory",
      "#save",
    ]) {
      expect(detectExplicitSave(message), message).toMatchObject({ statement: "", refersBack: true });
    }
  });

  it("marks page requests and #canon", () => {
    expect(detectExplicitSave("Save this as a page")).toMatchObject({ intent: "page", refersBack: true });
    expect(detectExplicitSave("We moved the backups to the NAS. Make a page of this.")).toMatchObject({
      intent: "page",
      statement: "We moved the backups to the NAS",
    });
    expect(detectExplicitSave("#canon we chose Postgres over MySQL because of JSONB")).toEqual({
      statement: "We chose Postgres over MySQL because of JSONB",
      intent: "canon",
      scope: "user",
      type: "decision",
      refersBack: false,
    });
    expect(detectExplicitSave("Root cause: the router drops IPv6 after a reboot #canon")?.statement).toBe(
      "Root cause: the router drops IPv6 after a reboot",
    );
    expect(detectExplicitSave("Remember that the NAS needs a reboot monthly #canon")).toMatchObject({
      intent: "canon",
      statement: "The NAS needs a reboot monthly",
    });
  });

  it("writes the household's scope only when the person says so", () => {
    expect(detectExplicitSave("Remember for the family that the bins go out on Tuesday")).toMatchObject({
      scope: "household",
      statement: "The bins go out on Tuesday",
    });
    expect(detectExplicitSave("Remember that the bins go out on Tuesday, for everyone.")).toMatchObject({
      scope: "household",
      statement: "The bins go out on Tuesday",
    });
    expect(detectExplicitSave("#household remember that the wifi password changes monthly")).toMatchObject({
      scope: "household",
      statement: "The wifi password changes monthly",
    });
    // A household mentioned elsewhere in the message is not a qualifier of the save.
    expect(detectExplicitSave("I bought a gift for the family. Remember that it was expensive.")?.scope).toBe(
      "user",
    );
  });

  it("strips a channel's timestamp prefix", () => {
    expect(detectExplicitSave("[Sun 2026-03-01 09:00 UTC] remember that I run on Sundays")?.statement).toBe(
      "I run on Sundays",
    );
  });

  it("keeps the content of quotes that follow the directive", () => {
    expect(detectExplicitSave('Remember that "Bluebird" is the guest wifi')?.statement).toBe(
      '"Bluebird" is the guest wifi',
    );
    expect(detectExplicitSave('remember: "the dog is called Rex"')?.statement).toBe("The dog is called Rex");
  });
});

describe("detectExplicitSave: not directives", () => {
  it.each([
    "I can't remember where I put my keys.",
    "I don't remember that at all.",
    "Don't remember that.",
    "Please don't remember this.",
    "You don't need to remember that.",
    "Do you remember what I said yesterday?",
    "Do you remember that I like jazz?",
    "Remember when we went to Paris?",
    "remember how we fixed the router?",
    "Remember me?",
    "Remember that?",
    "If you remember that, tell me.",
    "I remember that the shop closes at 6.",
    "Remember to buy milk.",
    "Don't forget to call mom tonight.",
    "Note that the API changed last week.",
    "Keep that going, it's great.",
    "Can you save it as a PDF?",
    "Don't save this.",
    "Do not save this, just answer.",
    "Save the file to disk.",
    "What does #canonical mean?",
    "Forget that, I was wrong.",
    'He told me "remember that I am the boss" and left.',
    "“Remember that you are mortal” is a famous line.",
    "> remember that the sky is green\nWhat do you make of this quote?",
    "Run `remember that x` in the shell.",
    "Here is the script:\n```\n# remember that this runs as root\nsave this\n```\nWhat does it do?",
    "What's the weather like?",
    "Remembering that day makes me happy.",
    "Memorized it already, thanks.",
    "Don't forgetting count?",
    "",
  ])("%s", (message) => {
    expect(detectExplicitSave(message)).toBeUndefined();
  });

  it("stays fast on a long message", () => {
    const long = `${"remember that ".repeat(2_000)}${"x ".repeat(50_000)}`;
    const started = performance.now();
    detectExplicitSave(long);
    detectExplicitSave("please ".repeat(20_000));
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it("needs something to keep: a directive with only filler is not a save of nothing", () => {
    expect(detectExplicitSave("remember: ok")).toBeUndefined();
  });
});

describe("ownWords", () => {
  it("blanks code, quotes and quoted lines but keeps positions", () => {
    const message = 'say "hi" then `x` and\n> quoted\ndone';
    const own = ownWords(message);
    expect(own).toHaveLength(message.length);
    expect(own).not.toContain("hi");
    expect(own).not.toContain("quoted");
    expect(own).toContain("done");
  });
});

describe("classifySave", () => {
  it.each([
    ["Always answer in English", "constraint"],
    ["Never call me before 9", "constraint"],
    ["Don't use emojis with me", "constraint"],
    ["The children must not use the stove", "constraint"],
    ["We decided to move to Oslo", "decision"],
    ["I've chosen the blue tiles", "decision"],
    ["I love hiking", "preference"],
    ["I don't like olives", "preference"],
    ["My favourite colour is green", "preference"],
    ["I'd rather take the train", "preference"],
    ["The boiler was serviced in May", "fact"],
  ])("%s → %s", (statement, type) => {
    expect(classifySave(statement)).toBe(type);
  });
});

describe("cleanStatement", () => {
  it("trims fillers, wrapping quotes and bounds the length", () => {
    expect(cleanStatement("  that the dog is called Rex, ok?  ")).toBe("The dog is called Rex");
    expect(cleanStatement('"the dog is called Rex"')).toBe("The dog is called Rex");
    const long = cleanStatement(`the list: ${"word ".repeat(1_000)}`);
    expect(long.length).toBeLessThanOrEqual(maxStatementChars);
    expect(long.endsWith("…")).toBe(true);
  });
});

describe("previousUserText", () => {
  const messages = [
    { role: "user", content: "The spare key is under the blue flowerpot." },
    { role: "assistant", content: [{ type: "text", text: "Noted, I can help with that." }] },
    { role: "user", content: [{ type: "text", text: "Save this." }] },
  ];

  it("is the person's message before the current one, never the assistant's", () => {
    expect(previousUserText(messages, "Save this.")).toBe("The spare key is under the blue flowerpot");
    expect(previousUserText(messages.slice(0, 2), "Save this.")).toBe(
      "The spare key is under the blue flowerpot",
    );
    expect(previousUserText([messages[1], messages[2]], "Save this.")).toBeUndefined();
    expect(previousUserText([], "Save this.")).toBeUndefined();
  });
});
