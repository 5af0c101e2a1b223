/**
 * The wordings bench/generated-conversations.ts draws from, written by hand so that questions say things the
 * way a person would ask them, not the way the fact was said ("allergic to shellfish" / "what can't I eat?").
 * {value}, {friend}, {name}, {before} and {after} are filled in per conversation.
 */

export interface PlainFact {
  values: readonly string[];
  /** What the person says, one of these. */
  said: readonly string[];
  /** The same kind of fact about someone else, with another value. */
  distractor: string;
  asked: readonly string[];
}

export const plainFacts: readonly PlainFact[] = [
  {
    values: ["greyhound", "beagle", "border collie", "dachshund", "labrador"],
    said: [
      "We finally brought home a {value} from the rescue centre, she is already asleep on the sofa.",
      "Big news, we adopted a {value} on Saturday and the cat is not impressed.",
    ],
    distractor: "{friend} brought their {value} to the office today and nobody got any work done.",
    asked: ["What breed is our new dog?", "Which kind of dog did we get?"],
  },
  {
    values: ["shellfish", "peanuts", "sesame", "kiwi fruit", "penicillin"],
    said: [
      "The clinic called back: I am allergic to {value}, which explains the hives.",
      "Turns out the rash was an allergy to {value}, the test was very clear.",
    ],
    distractor: "{friend} told me they react badly to {value}, so the party menu needs changing.",
    asked: ["What did the test show I have to avoid?", "What am I allergic to?"],
  },
  {
    values: ["cello", "trumpet", "banjo", "piano", "clarinet"],
    said: [
      "I signed up for {value} lessons on Thursday evenings, my fingers hurt already.",
      "My teacher says my {value} scales are getting cleaner, practice is paying off.",
    ],
    distractor: "{friend} has played the {value} in an orchestra for twenty years.",
    asked: ["Which instrument am I learning?", "What am I taking music lessons in?"],
  },
  {
    values: ["Lisbon", "Kyoto", "Reykjavik", "Cape Town", "Montreal"],
    said: [
      "The flights are booked, our honeymoon will be in {value} in the spring.",
      "We settled on {value} for the honeymoon after weeks of arguing about it.",
    ],
    distractor: "{friend} just came back from {value} and would not stop showing photos.",
    asked: ["Where are we going after the wedding?", "Which city did we choose for the trip after we marry?"],
  },
  {
    values: ["Volvo estate", "Fiat Panda", "Tesla Model 3", "Toyota Yaris", "Skoda Octavia"],
    said: [
      "Traded the old van in and picked up a second-hand {value} yesterday.",
      "Our new car is a {value}, it is so much quieter on the motorway.",
    ],
    distractor: "{friend} keeps telling me to buy a {value} like theirs.",
    asked: ["What do we drive now?", "Which car did we buy?"],
  },
  {
    values: ["Hilary Mantel", "Ursula K. Le Guin", "Terry Pratchett", "Toni Morrison", "Kazuo Ishiguro"],
    said: [
      "I have read everything {value} ever wrote, twice.",
      "Nobody writes like {value}, I keep going back to those novels.",
    ],
    distractor: "{friend} lent me a {value} novel but I could not get into it.",
    asked: ["Who is my favourite author?", "Whose books do I reread the most?"],
  },
  {
    values: ["night shifts", "the early rota", "weekends only", "four days a week", "split shifts"],
    said: [
      "From next month I am on {value} at the hospital, so evenings will be odd.",
      "The new schedule puts me on {value}, I will need to rethink the school run.",
    ],
    distractor: "{friend} has been on {value} for a year and looks exhausted.",
    asked: ["What hours will I be working?", "What is my new work schedule?"],
  },
  {
    values: [
      "a half marathon",
      "a triathlon",
      "a 100 km cycle ride",
      "an open-water swim",
      "a mountain ultra",
    ],
    said: [
      "I entered {value} in October, training starts on Monday.",
      "Registration done: {value} this autumn, no backing out now.",
    ],
    distractor: "{friend} finished {value} last year in a terrible time but very happy.",
    asked: ["What race am I training for?", "Which endurance event did I sign up for?"],
  },
  {
    values: ["oat milk", "decaf", "green tea", "sparkling water", "hot chocolate"],
    said: [
      "I have switched to {value} in the mornings, coffee was wrecking my sleep.",
      "These days it is only {value} before work for me.",
    ],
    distractor: "{friend} drinks {value} all day long.",
    asked: ["What do I have instead of coffee now?", "What is my morning drink these days?"],
  },
  {
    values: ["sourdough", "pottery", "woodturning", "watercolours", "bouldering"],
    said: [
      "My new weekend obsession is {value}, I spent all Sunday at it.",
      "I joined a {value} class at the community centre, it is wonderfully calming.",
    ],
    distractor: "{friend} got into {value} last winter and now sells their work at the market.",
    asked: ["What hobby did I pick up recently?", "How do I spend my weekends lately?"],
  },
  {
    values: ["the 14th of March", "the 2nd of August", "Christmas Eve", "the 30th of June", "New Year's Day"],
    said: [
      "My birthday is on {value}, I would like a quiet dinner this year.",
      "Being born on {value} means my birthday always gets forgotten.",
    ],
    distractor: "{friend}'s birthday is {value}, I need to get them a card.",
    asked: ["When do I turn a year older?", "On which date is my birthday?"],
  },
  {
    values: ["Portuguese", "Japanese", "Welsh", "Mandarin", "Swedish"],
    said: [
      "I am doing an evening course in {value}, the grammar is brutal.",
      "Thirty days in a row on my {value} app, I can order food now.",
    ],
    distractor: "{friend} grew up speaking {value} at home.",
    asked: ["Which language am I studying?", "What am I learning to speak?"],
  },
];

export interface ChangingFact {
  values: readonly string[];
  first: string;
  changed: string;
  /** Answered by the later turn alone: the earlier one is the fact's own distractor. */
  askedNow: string;
  /** Answered by the earlier turn: its session's date is the answer. */
  askedWhen: string;
}

export const changingFacts: readonly ChangingFact[] = [
  {
    values: ["Leeds", "Bristol", "Glasgow", "Norwich", "Cardiff"],
    first: "The removal van came today, we are officially living in {value} now.",
    changed: "Decision made, we are leaving {before} for {after} in the new year.",
    askedNow: "Which city are we relocating to?",
    askedWhen: "When did we move house the first time?",
  },
  {
    values: ["a pharmacy", "a law firm", "the council", "a start-up", "a school"],
    first: "First day at {value} today, everyone was lovely.",
    changed: "I handed in my notice; after years at {before} I start at {after} in March.",
    askedNow: "Where is my next job?",
    askedWhen: "When did I begin working at my previous employer?",
  },
  {
    values: ["vegetarian", "vegan", "pescatarian", "keto", "gluten-free"],
    first: "I have gone {value}, day one and I already miss cheese toasties.",
    changed: "I gave up being {before}; the doctor suggested {after} instead and I feel better.",
    askedNow: "What diet am I following these days?",
    askedWhen: "When did I first change how I eat?",
  },
  {
    values: ["Hana", "Rupert", "Iris", "Mateo", "Zara"],
    first: "Our new neighbour {value} invited us for drinks, they seem great.",
    changed: "{before} moved out and the new people next door, {after} and family, came round to say hello.",
    askedNow: "Who lives next door now?",
    askedWhen: "When did we first meet the previous neighbour?",
  },
  {
    values: ["the blue line", "the number 12 bus", "the ferry", "the ring road", "the towpath"],
    first: "I worked out a new commute, {value} gets me in twenty minutes faster.",
    changed: "Forget {before}, since the roadworks I go in via {after}.",
    askedNow: "How do I get to work at the moment?",
    askedWhen: "When did I first work out a faster way into the office?",
  },
];

export interface Relative {
  names: readonly string[];
  /** Names the relative ({name}) and how they are related, nothing else. */
  introduced: string;
  /** Says something about {name} ({value}) without saying how they are related. */
  property: string;
  values: readonly string[];
  asked: string;
}

export const relatives: readonly Relative[] = [
  {
    names: ["Greta", "Hana", "Sofia", "Elena", "Rosa"],
    introduced: "My younger sister {name} is staying with us for a few weeks.",
    property: "{name} got her offer letter today, she is going to study {value}!",
    values: ["nursing", "architecture", "marine biology", "veterinary medicine", "law"],
    asked: "What subject will my sister be studying?",
  },
  {
    names: ["Marco", "Dev", "Mei", "Kofi", "Yusuf"],
    introduced: "My best friend since school, {name}, is coming round for dinner.",
    property: "{name} finally opened {value} on the high street, the queue was round the block.",
    values: ["a bakery", "a bike shop", "a bookshop", "a tattoo studio", "a ramen bar"],
    asked: "What kind of business did my oldest friend start?",
  },
  {
    names: ["Pavel", "Liam", "Ines", "Harriet", "Sunil"],
    introduced: "My manager {name} asked me to lead the new project.",
    property: "{name} spent the whole lunch break talking about {value} again.",
    values: ["cricket", "Formula 1", "rugby", "snooker", "cycling"],
    asked: "Which sport is my boss obsessed with?",
  },
  {
    names: ["Edith", "Margit", "Dolores", "Sakura", "Winifred"],
    introduced: "My grandmother {name} turns ninety next month.",
    property: "{name} still {value} every single morning, it is incredible.",
    values: [
      "swims in the lake",
      "does the crossword in ink",
      "walks five miles",
      "bakes bread",
      "plays chess online",
    ],
    asked: "What does my gran do each day?",
  },
  {
    names: ["Bernard", "Tobias", "Ahmed", "Declan", "Felix"],
    introduced: "Our son's godfather, {name}, sent a parcel for the birthday.",
    property: "{name} is flying out to {value} for work for six months.",
    values: ["Singapore", "Nairobi", "Vancouver", "Dubai", "Melbourne"],
    asked: "Where is my child's godparent being posted?",
  },
];

export interface Preference {
  said: readonly string[];
  /** A question the preference answers without sharing its words. */
  asked: string;
}

export const preferences: readonly Preference[] = [
  {
    said: [
      "Crowded beaches are my idea of hell, give me a quiet cabin in the hills any day.",
      "I would take an empty mountain hut over a packed resort every time.",
    ],
    asked: "Would I enjoy a week at a busy seaside holiday park?",
  },
  {
    said: [
      "Loud music in the car gives me a headache, podcasts are much better for the drive.",
      "I cannot stand the radio blaring; I listen to spoken-word shows in traffic.",
    ],
    asked: "What should be playing on a long road trip with me?",
  },
  {
    said: [
      "Horror films give me nightmares for a week, I will stick to comedies.",
      "Anything scary and I am hiding behind a cushion, I much prefer a good laugh.",
    ],
    asked: "Which film should we pick for movie night?",
  },
  {
    said: [
      "Mornings are when my brain works, by four in the afternoon I am useless.",
      "I do my best thinking at dawn, afternoons are a write-off.",
    ],
    asked: "When should I schedule the important meeting?",
  },
  {
    said: [
      "Flowers just die on me, I would much rather get a book as a present.",
      "Please no more bouquets, a good novel is the best gift you can give me.",
    ],
    asked: "What would be a good thing to give me for my anniversary?",
  },
  {
    said: [
      "Spicy food and I do not get along, even mild curry is too much for me.",
      "I am a total wimp with chilli, a hint of pepper is my limit.",
    ],
    asked: "Should we take me to the new Sichuan hot-pot place?",
  },
];

/** Ways a person opens a line of small talk: with the lines below, hundreds of distinct turns, as in real chats. */
export const smallTalkOpeners: readonly string[] = [
  "",
  "Ugh,",
  "So,",
  "Anyway,",
  "Honestly,",
  "Right,",
  "Quick update:",
  "Random thought:",
  "Evening!",
  "Morning!",
];

/** The person's small talk: turns that hold no fact a question asks about. */
export const smallTalk: readonly string[] = [
  "What a grey day, it has not stopped raining since breakfast.",
  "I slept badly again, the neighbours had a party.",
  "Can you remind me what we were talking about yesterday?",
  "The traffic this morning was unbelievable.",
  "I finally cleaned out the garage, found a box of old photos.",
  "Any ideas for a quick dinner with what is left in the fridge?",
  "Work was fine, nothing exciting to report.",
  "I watched the match last night, what a finish.",
  "The kids have a school trip tomorrow so it will be an early start.",
  "I need to book the car in for its service at some point.",
  "It is so warm today, I had lunch outside.",
  "I keep forgetting to water the plants.",
  "We had friends over on Saturday, it went on far too late.",
  "I am trying to read more and scroll less.",
  "The washing machine is making a strange noise again.",
  "Do you think it will snow this weekend?",
  "I spent the evening sorting out paperwork, thrilling stuff.",
  "My back is sore from gardening.",
  "The new series everyone talks about is overrated, honestly.",
  "I made soup from scratch and it was actually good.",
  "The train was cancelled so I worked from home.",
  "I need a holiday, even just a long weekend.",
  "We went for a long walk along the river this afternoon.",
  "I have a dentist appointment on Friday, not looking forward to it.",
  "The broadband dropped out three times today.",
  "I bought a new pair of running shoes, very bright.",
  "Just got back from the supermarket, it was heaving.",
  "Thanks for the help earlier, it worked.",
  "I think I am coming down with a cold.",
  "We are repainting the hallway this weekend.",
  "I found a great podcast about history, listened to three episodes.",
  "My phone screen cracked, of course the day after the warranty ended.",
  "Long day. Meetings back to back.",
  "The garden is full of birds this morning.",
  "I tried a new recipe with lentils, not bad at all.",
  "The heating broke so we are all in jumpers.",
  "Can you suggest something to do on a rainy Sunday?",
  "I finished the jigsaw puzzle finally, a thousand pieces.",
  "We should plan something for the bank holiday.",
  "I am so behind on emails.",
];

/** How the assistant follows up a reply; with the replies below, over a hundred distinct answers. */
export const assistantFollowUps: readonly string[] = [
  "",
  "I am here if you want to talk it through.",
  "Let me know how it goes.",
  "Keep me posted.",
  "Anything else on your mind today?",
  "I can check in about it later this week.",
  "Take care of yourself.",
  "Happy to help with the details.",
];

/** The assistant's replies: supportive, curious, and never repeating what the person said. */
export const assistantReplies: readonly string[] = [
  "That sounds like quite a day. How are you feeling about it?",
  "Thanks for telling me, I will keep that in mind.",
  "Good to hear. Anything you would like help with?",
  "That makes sense. Do you want me to set a reminder?",
  "Oh, how exciting! Tell me more when you have a moment.",
  "I am sorry to hear that. Is there anything I can do?",
  "Noted. Let me know if that changes.",
  "That is lovely. What are you planning next?",
  "Understood. Shall I add it to your notes?",
  "Sounds sensible. Would you like some suggestions?",
  "Ha, I can imagine. How did everyone else take it?",
  "Got it. I will bring it up again when it matters.",
  "That is a big step. How do you feel about it?",
  "Interesting! What made you decide that?",
  "Fair enough. Want me to look anything up?",
  "That is good news. Congratulations!",
];
