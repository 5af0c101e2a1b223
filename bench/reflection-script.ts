/**
 * A scripted household conversation for the reflection benchmark: one person (Alice, in household h1) over a few
 * weeks, with what a real one holds — new facts and preferences, household constraints and decisions, updates and
 * corrections of what was said before, confirmations, doubts, and turns with nothing durable in them (small talk,
 * questions, one-off requests). `seed` is what memory holds before the first turn, so retrieval has something to
 * inject and the reflection something to reinforce, weaken, contradict, correct or link.
 */

export interface ScriptedTurn {
  user: string;
  assistant: string;
}

export interface SeedObject {
  statement: string;
  type: "fact" | "preference" | "constraint" | "decision";
  scope: "user" | "household";
}

export const seed: SeedObject[] = [
  { statement: "Alice takes her coffee black.", type: "preference", scope: "user" },
  { statement: "The recycling bins go out on Tuesday evenings.", type: "constraint", scope: "household" },
  { statement: "Alice works from home on Mondays and Fridays.", type: "fact", scope: "user" },
  { statement: "The family car is a grey Volvo estate.", type: "fact", scope: "household" },
  { statement: "Alice's sister Ingrid lives in Bergen.", type: "fact", scope: "user" },
  {
    statement: "The household decided to buy groceries online on Sundays.",
    type: "decision",
    scope: "household",
  },
  { statement: "The kids must be in bed by 8 pm on school nights.", type: "constraint", scope: "household" },
  { statement: "Alice is allergic to peanuts.", type: "fact", scope: "user" },
];

export const script: ScriptedTurn[] = [
  { user: "Good morning! How are you today?", assistant: "Good morning! I'm fine, thanks. How can I help?" },
  {
    user: "Can you remind me when the bins go out? I think glass goes with them on Tuesdays too now.",
    assistant: "The recycling bins go out on Tuesday evenings; I'll note that glass goes out with them too.",
  },
  {
    user: "I've started taking oat milk in my coffee, no more black coffee for me.",
    assistant: "Got it: coffee with oat milk from now on.",
  },
  { user: "What's the weather like in Oslo tomorrow?", assistant: "I can't check the weather from here." },
  {
    user: "My sister Ingrid actually moved from Bergen to Trondheim last month.",
    assistant: "Thanks, I'll remember that Ingrid lives in Trondheim now.",
  },
  {
    user: "We decided the kids can stay up until 9 on Fridays, but school nights stay at 8.",
    assistant: "Noted: 9 pm on Fridays, 8 pm on school nights.",
  },
  {
    user: "Write me a short poem about autumn.",
    assistant: "Leaves of amber drift and fall, / autumn whispers to us all.",
  },
  {
    user: "Yes, I still work from home on Mondays and Fridays, that hasn't changed.",
    assistant: "Understood, Mondays and Fridays at home.",
  },
  {
    user: "I'm not sure the car is grey anymore, I think Ole had it repainted dark blue.",
    assistant: "I'll keep in mind that the Volvo may be dark blue now.",
  },
  {
    user: "Please remember that my dentist appointment is every six months at the Torget clinic.",
    assistant: "Noted: dentist every six months at the Torget clinic.",
  },
  { user: "Thanks, that's all for now.", assistant: "You're welcome!" },
  {
    user: "We switched the online grocery order to Saturday mornings instead of Sundays.",
    assistant: "Okay, groceries are ordered on Saturday mornings now.",
  },
  {
    user: "I'm allergic to peanuts, so please never suggest recipes with peanuts or peanut oil.",
    assistant: "Of course, no peanuts or peanut oil in any recipe.",
  },
  {
    user: "I prefer metric units in recipes, grams and millilitres please.",
    assistant: "Metric units from now on.",
  },
  { user: "How many grams are in a cup of flour?", assistant: "About 120 grams." },
  {
    user: "The car is definitely dark blue now, I saw it this morning.",
    assistant: "Thanks for confirming: the Volvo is dark blue.",
  },
  {
    user: "Ole and I agreed that nobody deploys changes to the home server on Fridays.",
    assistant: "Noted as a household rule: no home-server deploys on Fridays.",
  },
  {
    user: "Our neighbour Sven keeps bees behind the old barn and sells honey in August.",
    assistant: "Nice! Sven's honey in August.",
  },
  { user: "Can you set a timer for ten minutes?", assistant: "I can't set timers, sorry." },
  {
    user: "No, I don't work from home on Fridays anymore, only on Mondays.",
    assistant: "Updated: home office on Mondays only.",
  },
  {
    user: "My favourite running route is the loop around Sognsvann lake, about 3.3 km.",
    assistant: "The Sognsvann loop, noted.",
  },
  {
    user: "The garden shed key now hangs on the hook by the back door.",
    assistant: "Got it, shed key on the hook by the back door.",
  },
  {
    user: "Ingrid visits us every June, usually for a week.",
    assistant: "Ingrid's June visit, noted.",
  },
  { user: "Bye for now!", assistant: "Bye, Alice!" },
];
