import { test } from "uvu";
import * as assert from "uvu/assert";
import { validate } from "@octokit/graphql-schema";
import { BODY_AUTHORSHIP_QUERY, issuesTrustQuery, trustAnswers } from "./_github-trust.ts";
import { TRUST_BATCH } from "./github-types.ts";

const at = "2026-01-15T10:00:00Z";
const later = "2026-01-15T11:00:00Z";
const user = (login: string) => ({ __typename: "User", login });

/** One issue's answer as GitHub gives it: labelled by the owner, never edited, never renamed. */
function issue(change: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    author: { login: "owner" }, title: "Fix it", body: "text", editor: null, lastEditedAt: null,
    userContentEdits: { totalCount: 0, nodes: [] },
    timelineItems: {
      pageInfo: { hasNextPage: false },
      nodes: [{ __typename: "LabeledEvent", actor: user("owner"), createdAt: at, label: { name: "robot-army", updatedAt: at } }],
    },
    ...change,
  };
}

const owned = { events: [{ event: "labeled", label: "robot-army", actor: "owner", at }], authorship: { author: "owner", title: "Fix it", body: "text", editors: [], lastEditedAt: null, complete: true } };

test("the queries robot-army sends are valid against GitHub's published GraphQL schema", () => {
  assert.equal(validate(BODY_AUTHORSHIP_QUERY).map((e) => e.message), []);
  assert.equal(validate(issuesTrustQuery([1])).map((e) => e.message), []);
  assert.equal(validate(issuesTrustQuery(Array.from({ length: TRUST_BATCH }, (_, i) => 1000 + i))).map((e) => e.message), []);
});

test("one query asks about 1 to TRUST_BATCH issues, each under its own alias, by a positive number", () => {
  assert.match(issuesTrustQuery([7, 12]), /i7: issue\(number: 7\)[\s\S]*i12: issue\(number: 12\)/);
  assert.throws(() => issuesTrustQuery([]), RangeError);
  assert.throws(() => issuesTrustQuery(Array.from({ length: TRUST_BATCH + 1 }, (_, i) => i + 1)), RangeError);
  for (const bad of [0, -1, 1.5, Number.NaN]) assert.throws(() => issuesTrustQuery([bad]), RangeError);
});

test("a whole answer gives each issue's label and rename events, oldest first, and its body's authorship as bodyAuthorship reads it", () => {
  const renamed = issue({
    editor: { login: "mallory" }, lastEditedAt: later, body: "edited",
    userContentEdits: { totalCount: 2, nodes: [{ editor: { login: "mallory" }, editedAt: later }, { editor: null, editedAt: at }] },
    timelineItems: {
      pageInfo: { hasNextPage: false },
      nodes: [
        { __typename: "LabeledEvent", actor: user("owner"), createdAt: at, label: { name: "robot-army", updatedAt: at } },
        { __typename: "RenamedTitleEvent", actor: user("mallory"), createdAt: later, previousTitle: "Fix it", currentTitle: "Break it" },
      ],
    },
  });
  const answers = trustAnswers({ data: { repository: { i1: issue(), i2: renamed } } }, [1, 2]);
  assert.equal(answers.get(1), owned);
  assert.equal(answers.get(2), {
    events: [{ event: "labeled", label: "robot-army", actor: "owner", at }, { event: "renamed", from: "Fix it", to: "Break it", actor: "mallory", at: later }],
    authorship: { author: "owner", title: "Fix it", body: "edited", editors: ["mallory", "ghost"], lastEditedAt: later, complete: true },
  });
});

test("an error naming one issue leaves that issue out, even with data for it: never read as no editors", () => {
  const answer = {
    data: { repository: { i1: issue(), i2: issue({ userContentEdits: { totalCount: 0, nodes: [] } }), i3: null } },
    errors: [
      { type: "FORBIDDEN", path: ["repository", "i2", "userContentEdits"], message: "Resource not accessible" },
      { type: "NOT_FOUND", path: ["repository", "i3"], message: "Could not resolve to an Issue with the number of 3." },
    ],
  };
  assert.equal([...trustAnswers(answer, [1, 2, 3]).keys()], [1]);
});

test("an error naming no one issue, or the repository, leaves every issue out; so does an answer with no data", () => {
  const data = { repository: { i1: issue(), i2: issue() } };
  for (const errors of [[{ message: "Something went wrong while executing your query" }], [{ path: ["repository"], message: "gone" }], [{ path: [], message: "x" }], "not a list"]) {
    assert.is(trustAnswers({ data, errors }, [1, 2]).size, 0, JSON.stringify(errors));
  }
  for (const answer of [{}, { data: null }, { data: { repository: null } }, null, "text"]) assert.is(trustAnswers(answer, [1]).size, 0, JSON.stringify(answer));
  assert.is(trustAnswers({ data: { repository: { i2: issue() } } }, [1]).size, 0, "an issue asked for and not in the answer");
});

test("an issue whose answer might read otherwise than the REST events is left out: more events than a page, an actor not a User, a label changed since it was added", () => {
  const event = (change: Record<string, unknown>) => issue({
    timelineItems: { pageInfo: { hasNextPage: false }, nodes: [{ __typename: "LabeledEvent", actor: user("owner"), createdAt: at, label: { name: "robot-army", updatedAt: at }, ...change }] },
  });
  const cases: Record<string, unknown> = {
    "more events than one page": issue({ timelineItems: { pageInfo: { hasNextPage: true }, nodes: [] } }),
    "no page info": issue({ timelineItems: { nodes: [] } }),
    "no timeline": issue({ timelineItems: null }),
    "a bot (REST spells it name[bot])": event({ actor: { __typename: "Bot", login: "owner" } }),
    "an organisation": event({ actor: { __typename: "Organization", login: "owner" } }),
    "no actor (a deleted account)": event({ actor: null }),
    "an actor with no login": event({ actor: { __typename: "User" } }),
    "a label changed since": event({ label: { name: "robot-army", updatedAt: later } }),
    "a label with no update time": event({ label: { name: "robot-army", updatedAt: null } }),
    "no label": event({ label: null }),
    "no time": event({ createdAt: null }),
    "an item of another type": event({ __typename: "UnlabeledEvent" }),
    "a rename with no titles": event({ __typename: "RenamedTitleEvent" }),
    "no edits": issue({ userContentEdits: null }),
    "edits with no count": issue({ userContentEdits: { nodes: [] } }),
  };
  const numbers = Object.keys(cases).map((_, i) => i + 2);
  const repository = Object.fromEntries([["i1", issue()], ...Object.values(cases).map((raw, i) => [`i${i + 2}`, raw])]);
  assert.equal([...trustAnswers({ data: { repository } }, [1, ...numbers]).keys()], [1], "only the plain one is vouched for");
});

test("more revisions than one answer lists are vouched for as bodyAuthorship reads them: incomplete", () => {
  const many = issue({ editor: { login: "owner" }, userContentEdits: { totalCount: 150, nodes: [{ editor: { login: "owner" }, editedAt: at }] } });
  assert.equal(trustAnswers({ data: { repository: { i4: many } } }, [4]).get(4)?.authorship.complete, false);
});

test.run();
