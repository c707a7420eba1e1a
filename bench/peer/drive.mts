// Runs dzhng/deep-research once, as its run.ts does without the interactive
// feedback questions: deepResearch at the breadth and depth given, then
// writeFinalReport. Its model and search endpoints come from its own
// environment variables (OPENAI_ENDPOINT, FIRECRAWL_BASE_URL, …). Prints
// one JSON line last: how many learnings and URLs, and the report's length.
const dir = process.env.PEER_DIR;
if (!dir) {
  throw new Error('PEER_DIR must name a checkout of dzhng/deep-research');
}
const { deepResearch, writeFinalReport } = await import(`${dir}/src/deep-research.ts`);
const query = process.env.PEER_QUERY ?? '';
const breadth = Number(process.env.PEER_BREADTH ?? '4');
const depth = Number(process.env.PEER_DEPTH ?? '2');
const { learnings, visitedUrls } = await deepResearch({ query, breadth, depth });
const report = await writeFinalReport({ prompt: query, learnings, visitedUrls });
console.log(JSON.stringify({ learnings: learnings.length, urls: visitedUrls.length, reportChars: report.length }));
