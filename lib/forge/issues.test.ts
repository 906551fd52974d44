import { test } from "uvu";
import { seedForge } from "./seed.ts";
import * as assert from "uvu/assert";
import { failure, forgeTemplate, SEED_TIME } from "../testing/forge.ts";
import { makeBranch, pushBranch } from "../testing/forge-git.ts";

// Seeded: #1..#7 labelled by owner, #8 labelled by stranger, #9 unlabelled by owner.
const template = forgeTemplate({ issues: 7 });
test.after(() => template.remove());
const repo = { owner: "demo", repo: "widgets" };
const names = (labels: Array<string | { name?: string }>) => labels.map((l) => (typeof l === "string" ? l : l.name));

test("the issues carry GitHub's fields: number, user.login, labels as objects, ISO times, html_url", () =>
  template.use(async ({ owner }) => {
    const { data } = await owner.rest.issues.get({ ...repo, issue_number: 1 });
    assert.is(data.number, 1);
    assert.is(data.user?.login, "owner");
    assert.equal(names(data.labels), ["robot-army"]);
    assert.is(data.state, "open");
    assert.is(data.state_reason, null);
    assert.is(data.created_at, "2026-01-15T10:00:00Z");
    assert.is(data.updated_at, "2026-01-15T10:00:00Z");
    assert.is(data.closed_at, null);
    assert.match(data.html_url, /\/demo\/widgets\/issues\/1$/);
    assert.is(data.author_association, "COLLABORATOR", "demo is an organisation; owner may push to it");
    assert.not.ok("pull_request" in data);
  }));

test("listing by label needs every label named; state filters open, closed or all", () =>
  template.use(async ({ owner }) => {
    const list = async (params: Record<string, string>) => (await owner.rest.issues.listForRepo({ ...repo, per_page: 100, ...params })).data.map((i) => i.number);
    assert.equal(await list({}), [9, 8, 7, 6, 5, 4, 3, 2, 1], "open issues, newest first");
    assert.equal(await list({ labels: "robot-army" }), [8, 7, 6, 5, 4, 3, 2, 1]);
    await owner.rest.issues.addLabels({ ...repo, issue_number: 2, labels: ["urgent"] });
    assert.equal(await list({ labels: "robot-army,urgent" }), [2]);
    assert.equal(await list({ labels: "ROBOT-ARMY, Urgent" }), [2], "label names match whatever their case");
    await owner.rest.issues.update({ ...repo, issue_number: 3, state: "closed" });
    assert.equal(await list({ labels: "robot-army", state: "closed" }), [3]);
    assert.equal(await list({ labels: "robot-army", state: "all" }), [8, 7, 6, 5, 4, 3, 2, 1]);
    assert.not.ok((await list({ labels: "robot-army" })).includes(3));
    assert.is((await failure(owner.rest.issues.listForRepo({ ...repo, state: "shut" as "open" }))).status, 422);
  }));

let clock = SEED_TIME;
test("creator, since, sort and direction filter and order the list", () =>
  template.use(
    async ({ owner }) => {
      const list = async (params: Record<string, string>) => (await owner.rest.issues.listForRepo({ ...repo, per_page: 100, ...params })).data.map((i) => i.number);
      assert.equal(await list({ creator: "stranger" }), [8]);
      assert.equal(await list({ creator: "owner", labels: "robot-army", direction: "asc" }), [1, 2, 3, 4, 5, 6, 7]);
      clock = new Date("2026-02-01T00:00:00Z");
      await owner.rest.issues.update({ ...repo, issue_number: 4, body: "touched" });
      assert.equal(await list({ since: "2026-01-20T00:00:00Z" }), [4]);
      assert.equal((await list({ sort: "updated" }))[0], 4);
      assert.is((await failure(owner.rest.issues.listForRepo({ ...repo, since: "yesterday" }))).status, 422);
    },
    { now: () => clock },
  ));

test("assignee, milestone and mentioned filter the list as GitHub does for a repository with no assignees and no milestones", () =>
  template.use(async ({ owner, stranger }) => {
    const list = async (params: Record<string, string>) => (await owner.rest.issues.listForRepo({ ...repo, state: "all", per_page: 100, ...params })).data.map((i) => i.number);
    const all = await list({});
    assert.ok(all.length >= 9);
    assert.equal(await list({ assignee: "none" }), all, "nobody is assigned anything");
    assert.equal(await list({ assignee: "*" }), []);
    assert.equal(await list({ assignee: "owner" }), []);
    assert.equal(await list({ milestone: "none" }), all);
    assert.equal(await list({ milestone: "*" }), []);
    assert.equal(await list({ milestone: "1" }), []);
    assert.equal(await list({ mentioned: "stranger" }), []);
    await owner.rest.issues.createComment({ ...repo, issue_number: 2, body: "cc @Stranger, and an address: x@stranger.example" });
    await stranger.rest.issues.create({ ...repo, title: "Asks the owner", body: "What does @owner think?" });
    assert.equal(await list({ mentioned: "stranger" }), [2], "a mention in a comment, any case; an e-mail address is none");
    assert.is((await list({ mentioned: "owner" })).length, 1, "a mention in the body");
  }));

test("pagination: per_page and page slice the list; Link names next, last, prev and first", () =>
  template.use(async ({ owner, forge }) => {
    const first = await owner.rest.issues.listForRepo({ ...repo, labels: "robot-army", per_page: 3 });
    assert.equal(first.data.map((i) => i.number), [8, 7, 6]);
    const link = first.headers.link!;
    const id = (await owner.rest.repos.get(repo)).data.id;
    assert.ok(link.includes(`<${forge.url}/repositories/${id}/issues?labels=robot-army&per_page=3&page=2>; rel="next"`), `GitHub's /repositories/<id>/ form: ${link}`);
    assert.ok(link.includes('page=3>; rel="last"'), link);
    assert.not.ok(link.includes('rel="prev"'));
    const middle = await owner.rest.issues.listForRepo({ ...repo, labels: "robot-army", per_page: 3, page: 2 });
    assert.equal(middle.data.map((i) => i.number), [5, 4, 3]);
    for (const rel of ["prev", "next", "last", "first"]) assert.ok(middle.headers.link!.includes(`rel="${rel}"`), rel);
    const last = await owner.rest.issues.listForRepo({ ...repo, labels: "robot-army", per_page: 3, page: 3 });
    assert.equal(last.data.map((i) => i.number), [2, 1]);
    assert.not.ok(last.headers.link!.includes('rel="next"'));
    const all = await owner.paginate(owner.rest.issues.listForRepo, { ...repo, labels: "robot-army", per_page: 3 });
    assert.equal(all.map((i) => i.number), [8, 7, 6, 5, 4, 3, 2, 1], "Octokit follows the Link header");
    const single = await owner.rest.issues.listForRepo({ ...repo, labels: "robot-army" });
    assert.is(single.headers.link, undefined, "one page needs no Link");
  }));

test("pull requests appear in the issue list with a pull_request key, sharing the numbering", () =>
  template.use(async ({ owner, seeded, tmp }) => {
    pushBranch(tmp, seeded.repository.clone_url, "feature", "feature.txt");
    const pull = await owner.rest.pulls.create({ ...repo, title: "A change", head: "feature", base: "main" });
    assert.is(pull.data.number, 10);
    const listed = (await owner.rest.issues.listForRepo(repo)).data.find((i) => i.number === 10);
    assert.ok(listed?.pull_request?.url?.endsWith("/repos/demo/widgets/pulls/10"));
    assert.is((await owner.rest.issues.get({ ...repo, issue_number: 10 })).data.pull_request?.merged_at, null);
    assert.is((await owner.rest.issues.create({ ...repo, title: "Next" })).data.number, 11);
  }));

test("create an issue: 201, by the token's user, with labels created as needed", () =>
  template.use(async ({ owner }) => {
    const made = await owner.rest.issues.create({ ...repo, title: "New work", body: "Do it", labels: ["robot-army", "fresh"] });
    assert.is(made.status, 201);
    assert.is(made.data.number, 10);
    assert.is(made.data.user?.login, "owner");
    assert.is(made.data.body, "Do it");
    assert.equal(names(made.data.labels), ["robot-army", "fresh"]);
    assert.ok((await owner.rest.issues.listLabelsForRepo(repo)).data.some((l) => l.name === "fresh"));
  }));

test("a stranger's labels are dropped on create, and a stranger cannot label or close others' issues", () =>
  template.use(async ({ stranger }) => {
    const made = await stranger.rest.issues.create({ ...repo, title: "Mine", labels: ["robot-army"] });
    assert.equal(made.data.labels, [], "as on GitHub, without push access labels are silently dropped");
    assert.is(made.data.author_association, "NONE");
    assert.is((await failure(stranger.rest.issues.addLabels({ ...repo, issue_number: made.data.number, labels: ["robot-army"] }))).status, 403);
    assert.is((await failure(stranger.rest.issues.update({ ...repo, issue_number: 1, state: "closed" }))).status, 403);
    assert.is((await stranger.rest.issues.update({ ...repo, issue_number: made.data.number, title: "Mine, edited" })).data.title, "Mine, edited");
  }));

test("update: title, body, close with a reason, reopen; updated_at and closed_at follow the clock", () =>
  template.use(
    async ({ owner }) => {
      const edited = await owner.rest.issues.update({ ...repo, issue_number: 1, title: "Renamed", body: "New body" });
      assert.is(edited.data.title, "Renamed");
      assert.is(edited.data.body, "New body");
      assert.is(edited.data.updated_at, "2026-03-01T12:00:00Z");
      const closed = await owner.rest.issues.update({ ...repo, issue_number: 1, state: "closed", state_reason: "not_planned" });
      assert.is(closed.data.state, "closed");
      assert.is(closed.data.state_reason, "not_planned");
      assert.is(closed.data.closed_at, "2026-03-01T12:00:00Z");
      assert.is(closed.data.closed_by?.login, "owner");
      const reopened = await owner.rest.issues.update({ ...repo, issue_number: 1, state: "open" });
      assert.is(reopened.data.state_reason, "reopened");
      assert.is(reopened.data.closed_at, null);
      const completed = await owner.rest.issues.update({ ...repo, issue_number: 2, state: "closed" });
      assert.is(completed.data.state_reason, "completed", "closing without a reason completes");
      const relabelled = await owner.rest.issues.update({ ...repo, issue_number: 2, labels: ["other"] });
      assert.equal(names(relabelled.data.labels), ["other"], "labels in an update replace the issue's labels");
      assert.is((await failure(owner.rest.issues.update({ ...repo, issue_number: 2, state: "gone" as "open" }))).status, 422);
    },
    { now: () => new Date("2026-03-01T12:00:00.250Z") },
  ));

test("labels: add returns all of the issue's labels; remove one; removing one it lacks is 404", () =>
  template.use(async ({ owner }) => {
    const added = await owner.rest.issues.addLabels({ ...repo, issue_number: 9, labels: ["robot-army", "later"] });
    assert.equal(names(added.data), ["robot-army", "later"]);
    const again = await owner.rest.issues.addLabels({ ...repo, issue_number: 9, labels: ["robot-army"] });
    assert.equal(names(again.data), ["robot-army", "later"], "adding a label it has changes nothing");
    const removed = await owner.rest.issues.removeLabel({ ...repo, issue_number: 9, name: "robot-army" });
    assert.equal(names(removed.data), ["later"]);
    const missing = await failure(owner.rest.issues.removeLabel({ ...repo, issue_number: 9, name: "robot-army" }));
    assert.is(missing.status, 404);
    assert.is(missing.data.message, "Label does not exist");
    const spaced = await owner.rest.issues.addLabels({ ...repo, issue_number: 9, labels: ["needs info"] });
    assert.ok(names(spaced.data).includes("needs info"));
    assert.equal(names((await owner.rest.issues.removeLabel({ ...repo, issue_number: 9, name: "needs info" })).data), ["later"]);
    assert.is((await failure(owner.rest.issues.addLabels({ ...repo, issue_number: 9 }))).status, 422);
  }));

test("comments: create (201, by the token's user) and list oldest first; an empty body is 422", () =>
  template.use(async ({ owner, stranger }) => {
    const first = await owner.rest.issues.createComment({ ...repo, issue_number: 2, body: "Working on it in ra-widgets-2" });
    assert.is(first.status, 201);
    assert.is(first.data.user?.login, "owner");
    assert.match(first.data.html_url, /\/issues\/2#issuecomment-\d+$/);
    await stranger.rest.issues.createComment({ ...repo, issue_number: 2, body: "me too" });
    const listed = await owner.rest.issues.listComments({ ...repo, issue_number: 2 });
    assert.equal(listed.data.map((c) => [c.user?.login, c.body]), [["owner", "Working on it in ra-widgets-2"], ["stranger", "me too"]]);
    assert.is((await owner.rest.issues.get({ ...repo, issue_number: 2 })).data.comments, 2);
    const empty = await failure(owner.rest.issues.createComment({ ...repo, issue_number: 2, body: "" }));
    assert.is(empty.status, 422);
    assert.equal(empty.data.errors, [{ resource: "IssueComment", code: "missing_field", field: "body" }]);
    assert.is((await failure(owner.rest.issues.listComments({ ...repo, issue_number: 99 }))).status, 404);
  }));

test("a comment or issue body over GitHub's 65536 characters is 422 in GitHub's words; 65536 characters (counted as GitHub counts them) are taken", () =>
  template.use(async ({ owner }) => {
    const long = await failure(owner.rest.issues.createComment({ ...repo, issue_number: 2, body: "x".repeat(65537) }));
    assert.is(long.status, 422);
    assert.is(long.data.message, "Validation Failed");
    assert.equal(long.data.errors, [{ resource: "IssueComment", code: "custom", field: "body", message: "body is too long (maximum is 65536 characters)" }]);
    assert.is((await owner.rest.issues.createComment({ ...repo, issue_number: 2, body: "x".repeat(65536) })).status, 201);
    assert.is((await owner.rest.issues.createComment({ ...repo, issue_number: 2, body: "\u{1F916}".repeat(65536) })).status, 201, "a robot face is one character, two UTF-16 units");
    const issue = await failure(owner.rest.issues.create({ ...repo, title: "Long", body: "y".repeat(65537) }));
    assert.equal([issue.status, issue.data.errors[0].resource, issue.data.errors[0].message], [422, "Issue", "body is too long (maximum is 65536 characters)"]);
    const edit = await failure(owner.rest.issues.update({ ...repo, issue_number: 2, body: "y".repeat(65537) }));
    assert.is(edit.status, 422);
    assert.is((await owner.rest.issues.listComments({ ...repo, issue_number: 2 })).data.length, 2, "only the two that fit were taken");
  }));

test("GET /user/issues?filter=created lists what the user opened in every repository they may push to, each with its repository, paginated, with ETag and 304", () =>
  template.use(async ({ owner, stranger, dir }) => {
    await seedForge(dir, { repo: "demo/gadgets", now: () => SEED_TIME });
    const params = { filter: "created", state: "all", sort: "updated", direction: "desc" } as const;
    const mine = await owner.request("GET /user/issues", params);
    assert.equal(mine.data.map((i) => `${i.repository?.full_name}#${i.number} ${i.user?.login}`).sort(), [
      "demo/gadgets#1 owner", "demo/gadgets#2 owner", "demo/gadgets#3 owner", "demo/gadgets#5 owner",
      ...[1, 2, 3, 4, 5, 6, 7, 9].map((n) => `demo/widgets#${n} owner`),
    ]);
    assert.is((await owner.request("GET /user/issues", { ...params, labels: "robot-army" })).data.length, 10);
    assert.is((await owner.request("GET /user/issues")).data.length, 0, "assigned, the default: the forge keeps no assignees");
    assert.is((await stranger.request("GET /user/issues", params)).data.length, 0, "the stranger may push to neither repository");
    const paged = await owner.request("GET /user/issues", { ...params, per_page: 3 });
    assert.is(paged.data.length, 3);
    assert.match(paged.headers.link ?? "", /\/user\/issues\?.*page=2.*rel="next"/);
    const again = await failure(owner.request("GET /user/issues", { ...params, headers: { "if-none-match": mine.headers.etag } }));
    assert.is(again.status, 304);
  }));

test("issue events name who added and removed each label, as GitHub lists them: labels given at creation by the opener, oldest first", () =>
  template.use(async ({ dir, owner, stranger }) => {
    const events = async (n: number) => (await owner.request("GET /repos/{owner}/{repo}/issues/{issue_number}/events", { ...repo, issue_number: n })).data as any[];
    const seeded = await events(1);
    assert.equal(seeded.map((e) => [e.event, e.actor.login, e.label.name, e.label.color, e.created_at]), [["labeled", "owner", "robot-army", "5319e7", "2026-01-15T10:00:00Z"]]);
    assert.match(seeded[0].url, /\/repos\/demo\/widgets\/issues\/events\/\d+$/);
    assert.equal([seeded[0].commit_id, seeded[0].performed_via_github_app, typeof seeded[0].id], [null, null, "number"]);
    assert.equal(await events(9), [], "an unlabelled issue has no label event");
    // A collaborator labels the owner's issue; the owner takes the label off and puts it back.
    const { loadForgeData, saveForgeData, findRepo } = await import("./state.ts");
    const data = loadForgeData(dir);
    findRepo(data, "demo", "widgets")!.collaborators.push("stranger");
    saveForgeData(dir, data);
    await stranger.rest.issues.addLabels({ ...repo, issue_number: 9, labels: ["robot-army", "urgent"] });
    await owner.rest.issues.removeLabel({ ...repo, issue_number: 9, name: "ROBOT-ARMY" });
    await owner.rest.issues.update({ ...repo, issue_number: 9, labels: ["urgent", "robot-army"] });
    await owner.rest.issues.setLabels({ ...repo, issue_number: 9, labels: ["robot-army", "urgent"] });
    assert.equal((await events(9)).map((e) => `${e.event} ${e.label.name} by ${e.actor.login}`), [
      "labeled robot-army by stranger",
      "labeled urgent by stranger",
      "unlabeled robot-army by owner",
      "labeled robot-army by owner",
    ], "a label already there makes no event");
    const created = await owner.rest.issues.create({ ...repo, title: "New", labels: ["robot-army"] });
    assert.equal((await events(created.data.number)).map((e) => [e.event, e.actor.login]), [["labeled", "owner"]]);
    assert.is((await failure(owner.request("GET /repos/{owner}/{repo}/issues/{issue_number}/events", { ...repo, issue_number: 999 }))).status, 404);
  }));

test("a forge state written before label events were kept gives each label to the issue's opener, at its opening", () =>
  template.use(async ({ dir }) => {
    const { loadForgeData, saveForgeData, findRepo } = await import("./state.ts");
    const data = loadForgeData(dir);
    for (const issue of findRepo(data, "demo", "widgets")!.issues) delete issue.events;
    saveForgeData(dir, data);
    const again = findRepo(loadForgeData(dir), "demo", "widgets")!.issues;
    assert.equal(again.find((i) => i.number === 8)!.events!.map((e) => [e.event, e.actor, "label" in e && e.label, e.created_at]), [["labeled", "stranger", "robot-army", "2026-01-15T10:00:00Z"]]);
    assert.equal(again.find((i) => i.number === 9)!.events, []);
  }));

test("a title changed by PATCH is a renamed event naming who changed it, from what to what, in GitHub's shape; the same title makes none", () =>
  template.use(async ({ dir, owner, stranger }) => {
    const { loadForgeData, saveForgeData, findRepo } = await import("./state.ts");
    const data = loadForgeData(dir);
    findRepo(data, "demo", "widgets")!.collaborators.push("stranger");
    saveForgeData(dir, data);
    const before = (await owner.rest.issues.get({ ...repo, issue_number: 3 })).data.title;
    await stranger.rest.issues.update({ ...repo, issue_number: 3, title: "Delete the tests" });
    await owner.rest.issues.update({ ...repo, issue_number: 3, title: "Delete the tests", body: "same title" });
    const events = (await owner.request("GET /repos/{owner}/{repo}/issues/{issue_number}/events", { ...repo, issue_number: 3 })).data as any[];
    const renamed = events.filter((e) => e.event === "renamed");
    assert.equal(renamed.map((e) => [e.actor.login, e.rename, "label" in e, e.commit_id]), [["stranger", { from: before, to: "Delete the tests" }, false, null]]);
    assert.match(Buffer.from(renamed[0].node_id, "base64url").toString(), /^RTE_/);
    assert.is((await owner.rest.issues.get({ ...repo, issue_number: 3 })).data.title, "Delete the tests");
  }));

test("issue events are paginated with GitHub's Link header", () =>
  template.use(async ({ owner }) => {
    for (const name of ["a", "b", "c"]) await owner.rest.issues.addLabels({ ...repo, issue_number: 2, labels: [name] });
    const page = await owner.request("GET /repos/{owner}/{repo}/issues/{issue_number}/events", { ...repo, issue_number: 2, per_page: 2 });
    assert.is((page.data as unknown[]).length, 2);
    assert.match(page.headers.link ?? "", /rel="next"/);
  }));

test("GET /issues/comments lists the comments of every issue and pull request: ascending id unless sorted, newest first when sorted; since; paginated; a new comment changes the answer", () =>
  template.use(
    async ({ owner, stranger, seeded }) => {
      clock = new Date("2026-03-01T10:00:00Z");
      await owner.rest.issues.createComment({ ...repo, issue_number: 3, body: "on three" });
      clock = new Date("2026-03-02T10:00:00Z");
      await stranger.rest.issues.createComment({ ...repo, issue_number: 1, body: "on one" });
      makeBranch(seeded.repository.clone_url, "ra/talk", "talk.txt");
      const pull = (await owner.rest.pulls.create({ ...repo, title: "Talk", head: "ra/talk", base: "main" })).data.number;
      clock = new Date("2026-03-03T10:00:00Z");
      await owner.rest.issues.createComment({ ...repo, issue_number: pull, body: "on the pull request" });
      const bodies = async (params: Record<string, string> = {}) => (await owner.rest.issues.listCommentsForRepo({ ...repo, ...params })).data.map((c) => c.body);
      assert.equal(await bodies(), ["on three", "on one", "on the pull request"]);
      assert.equal(await bodies({ sort: "created" }), ["on the pull request", "on one", "on three"], "sorted without a direction: newest first");
      assert.equal(await bodies({ sort: "updated", direction: "asc" }), ["on three", "on one", "on the pull request"]);
      assert.equal(await bodies({ direction: "desc" }), ["on three", "on one", "on the pull request"], "direction is ignored without sort, as GitHub documents");
      assert.equal(await bodies({ since: "2026-03-02T00:00:00Z" }), ["on one", "on the pull request"]);
      assert.is((await failure(owner.rest.issues.listCommentsForRepo({ ...repo, sort: "sideways" as "created" }))).status, 422);
      const page = await owner.rest.issues.listCommentsForRepo({ ...repo, per_page: 2, page: 2 });
      assert.equal(page.data.map((c) => c.body), ["on the pull request"]);
      assert.match(page.data[0].html_url, new RegExp(`/demo/widgets/pull/${pull}#issuecomment-${page.data[0].id}$`));
      assert.match(page.headers.link ?? "", /\/repositories\/\d+\/issues\/comments\?.*rel="prev"/);

      const before = await owner.rest.issues.listCommentsForRepo(repo);
      assert.is((await failure(owner.rest.issues.listCommentsForRepo({ ...repo, headers: { "if-none-match": before.headers.etag } }))).status, 304);
      await stranger.rest.issues.createComment({ ...repo, issue_number: 2, body: "on two" });
      const after = await owner.rest.issues.listCommentsForRepo({ ...repo, headers: { "if-none-match": before.headers.etag } });
      assert.equal([after.status, after.data.length], [200, 4]);
    },
    { now: () => clock },
  ));

const DEPENDENCIES = "/repos/{owner}/{repo}/issues/{issue_number}/dependencies";

test("issue dependencies: an issue blocked by others (named by id) lists them, they list it as blocking, and issue_dependencies_summary counts the open ones apart from all", () =>
  template.use(
    async ({ owner }) => {
      clock = new Date("2026-03-01T10:00:00Z");
      const idOf = async (n: number) => (await owner.rest.issues.get({ ...repo, issue_number: n })).data.id;
      const one = await idOf(1);
      const three = await idOf(3);
      const summary = async (n: number) => (await owner.rest.issues.get({ ...repo, issue_number: n })).data.issue_dependencies_summary;
      const numbers = async (which: "blocked_by" | "blocking", n: number) => ((await owner.request(`GET ${DEPENDENCIES}/${which}`, { ...repo, issue_number: n })).data as Array<{ number: number }>).map((i) => i.number);
      assert.equal(await summary(2), { blocked_by: 0, total_blocked_by: 0, blocking: 0, total_blocking: 0 });

      const added = await owner.request(`POST ${DEPENDENCIES}/blocked_by`, { ...repo, issue_number: 2, issue_id: one });
      assert.is(added.status, 201);
      assert.is((added.data as { number: number }).number, 1, "the answer is the blocking issue");
      assert.match(added.headers.location ?? "", /\/repos\/demo\/widgets\/issues\/2\/dependencies\/blocked_by$/);
      await owner.request(`POST ${DEPENDENCIES}/blocked_by`, { ...repo, issue_number: 2, issue_id: three });
      assert.equal(await numbers("blocked_by", 2), [1, 3]);
      assert.equal(await numbers("blocking", 1), [2]);
      assert.equal(await numbers("blocking", 2), []);
      assert.equal(await summary(2), { blocked_by: 2, total_blocked_by: 2, blocking: 0, total_blocking: 0 });
      assert.equal(await summary(1), { blocked_by: 0, total_blocked_by: 0, blocking: 1, total_blocking: 1 });
      const paged = await owner.request(`GET ${DEPENDENCIES}/blocked_by`, { ...repo, issue_number: 2, per_page: 1 });
      assert.match(paged.headers.link ?? "", /rel="next"/);

      clock = new Date("2026-03-02T10:00:00Z");
      await owner.rest.issues.update({ ...repo, issue_number: 3, state: "closed" });
      assert.equal(await summary(2), { blocked_by: 1, total_blocked_by: 2, blocking: 0, total_blocking: 0 }, "a closed blocker blocks no more, and still counts in the total");
      assert.is((await owner.rest.issues.get({ ...repo, issue_number: 2 })).data.updated_at, "2026-03-02T10:00:00Z", "closing its blocker updated the blocked issue");
      await owner.rest.issues.update({ ...repo, issue_number: 2, state: "closed" });
      assert.equal(await summary(1), { blocked_by: 0, total_blocked_by: 0, blocking: 0, total_blocking: 1 });

      const removed = await owner.request(`DELETE ${DEPENDENCIES}/blocked_by/{issue_id}`, { ...repo, issue_number: 2, issue_id: three });
      assert.equal([removed.status, (removed.data as { number: number }).number], [200, 3]);
      assert.equal(await numbers("blocked_by", 2), [1]);
      assert.equal((await summary(2))?.total_blocked_by, 1);
      assert.is((await failure(owner.request(`DELETE ${DEPENDENCIES}/blocked_by/{issue_id}`, { ...repo, issue_number: 2, issue_id: three }))).status, 404);
    },
    { now: () => clock },
  ));

test("adding a dependency needs push access and updates both issues, so a list asked since then finds them; itself, twice, an unknown id or a number are refused", () =>
  template.use(
    async ({ owner, stranger }) => {
      clock = new Date("2026-03-01T10:00:00Z");
      const idOf = async (n: number) => (await owner.rest.issues.get({ ...repo, issue_number: n })).data.id;
      const add = (client: typeof owner, n: number, body: Record<string, unknown>) => client.request(`POST ${DEPENDENCIES}/blocked_by`, { ...repo, issue_number: n, ...body } as never);
      const four = await idOf(4);
      const denied = await failure(add(stranger, 5, { issue_id: four }));
      assert.equal([denied.status, denied.data.message], [403, "Must have push access to repository"]);
      assert.is((await failure(add(owner, 5, { issue_id: await idOf(5) }))).status, 422, "an issue cannot block itself");
      assert.is((await failure(add(owner, 5, { issue_id: 4 }))).status, 404, "an issue's number is not its id");
      assert.is((await failure(add(owner, 5, {}))).status, 422);
      assert.is((await failure(add(owner, 5, { issue_id: String(four) }))).status, 422);
      assert.is((await failure(add(owner, 99, { issue_id: four }))).status, 404);

      const since = { ...repo, since: "2026-03-15T00:00:00Z" };
      const before = await owner.rest.issues.listForRepo(since);
      assert.equal(before.data, []);
      clock = new Date("2026-04-01T10:00:00Z");
      await add(owner, 5, { issue_id: four });
      assert.is((await failure(add(owner, 5, { issue_id: four }))).status, 422, "a dependency already there");
      const after = await owner.rest.issues.listForRepo({ ...since, headers: { "if-none-match": before.headers.etag } });
      assert.equal([after.status, after.data.map((i) => [i.number, i.updated_at])], [200, [[5, "2026-04-01T10:00:00Z"], [4, "2026-04-01T10:00:00Z"]]]);
      assert.is((await failure(stranger.request(`DELETE ${DEPENDENCIES}/blocked_by/{issue_id}`, { ...repo, issue_number: 5, issue_id: four }))).status, 403);
      clock = new Date("2026-04-02T10:00:00Z");
      await owner.request(`DELETE ${DEPENDENCIES}/blocked_by/{issue_id}`, { ...repo, issue_number: 5, issue_id: four });
      assert.is((await owner.rest.issues.get({ ...repo, issue_number: 4 })).data.updated_at, "2026-04-02T10:00:00Z", "removing it updates both too");
    },
    { now: () => clock },
  ));

test.run();
