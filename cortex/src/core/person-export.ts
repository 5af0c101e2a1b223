/**
 * A person's export as a Markdown document they can read: what the assistant holds about them, current knowledge
 * first, then what was corrected or faded (with when), then their archived conversations. The same records as the
 * JSON export; nothing is left out for being old or invalid, since the point is to see all of it.
 */
import type { ExportedTranscript, KnowledgeObject, PersonExport } from "@remram/contract";

/** One line of text, with the characters that would turn a statement into Markdown markup escaped. */
export function inlineText(text: string): string {
  return text
    .replace(/\s+/g, " ")
    .trim()
    .replace(/[\\`*_[\]<>#|~]/g, (character) => `\\${character}`);
}

const day = (timestamp: string) => timestamp.slice(0, 10);

function knowledgeLine(object: KnowledgeObject): string {
  const details = [
    object.type,
    `confidence ${object.confidence.toFixed(2)}`,
    `from ${object.provenance.source} on ${day(object.provenance.observedAt)}`,
  ];
  if (object.userDirective) details.push("you asked to keep it");
  const dimensions = Object.entries(object.dimensions);
  if (dimensions.length > 0) {
    details.push(
      dimensions
        .map(([name, values]) => `${inlineText(name)}: ${values.map(inlineText).join(" / ")}`)
        .join(", "),
    );
  }
  if (object.status !== "active") {
    const since = object.validity.invalidAt ?? object.updatedAt;
    details.push(`${object.status} on ${day(since)}`);
  }
  return `- ${inlineText(object.statement)} (${details.join("; ")}) \`${object.id}\``;
}

function transcriptLine(transcript: ExportedTranscript): string {
  const recall = transcript.allowRecall ? "full text available" : "summary only";
  return `- ${day(transcript.createdAt)}, ${inlineText(transcript.sourceChannel)}: ${inlineText(transcript.summary)} (${recall}) \`${transcript.hash}\``;
}

export function renderPersonExport(exported: PersonExport): string {
  const current = exported.knowledge.filter((object) => object.status === "active");
  const past = exported.knowledge.filter((object) => object.status !== "active");
  const lines = [
    `# What Remram holds about ${inlineText(exported.userId)}`,
    "",
    `Exported ${exported.exportedAt}: ${current.length} current knowledge items, ${past.length} corrected or faded, ` +
      `${exported.transcripts.length} archived conversations.`,
    "",
    "## Knowledge",
    "",
    ...(current.length === 0 ? ["Nothing."] : current.map(knowledgeLine)),
    "",
    "## Corrected or faded",
    "",
    ...(past.length === 0 ? ["Nothing."] : past.map(knowledgeLine)),
    "",
    "## Archived conversations",
    "",
    ...(exported.transcripts.length === 0 ? ["Nothing."] : exported.transcripts.map(transcriptLine)),
    "",
  ];
  return lines.join("\n");
}
