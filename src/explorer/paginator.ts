import { ExplorerHttpError } from "./errors.js";
import { API_LIMITS, type OperationName } from "./operations.js";
import type { OperationParams } from "./params.js";
import type { OperationResults } from "./response-checkers.js";
import type { CallOptions, ListOperationName } from "./client.js";

type Call = <K extends OperationName>(operation: K, params: OperationParams[K], callOptions?: CallOptions) => Promise<OperationResults[K]>;

/** The client's paginate over its call: every page of a list in order, the next one asked for while the caller reads this one. */
export function paginatorOf(call: Call): <K extends ListOperationName>(operation: K, params: OperationParams[K], callOptions?: CallOptions) => AsyncGenerator<OperationResults[K], void, undefined> {
  async function* paginate<K extends ListOperationName>(operation: K, params: OperationParams[K], callOptions: CallOptions = {}): AsyncGenerator<OperationResults[K], void, undefined> {
    const first = params as OperationParams[K] & { page?: number; size?: number };
    const size = first.size ?? API_LIMITS.defaultPageSize;
    const firstPage = first.page ?? 1;
    const fetchPage = (page: number) => call(operation, { ...params, page, size }, callOptions);
    let next: Promise<OperationResults[K]> | undefined;
    for (let page = firstPage; ; page++) {
      let response: OperationResults[K];
      try {
        response = await (next ?? fetchPage(page));
      } catch (error) {
        if (isPastLastPage(error)) return;
        throw error;
      } finally {
        next = undefined;
      }
      const { results, paging } = response as OperationResults[ListOperationName];
      const last = paging.last || results.length < size || paging.current_page >= paging.total_page;
      // The next page is asked for while the caller works on this one, so that the server
      // and the caller work side by side. Only from the second page on: a caller may stop
      // after the first (a window too dense to count is split instead), and a page it never
      // reads would cost credits for nothing. The page exists: the answer counted it.
      if (!last && page > firstPage) {
        next = fetchPage(page + 1);
        // Awaited on the caller's next step; a caller that stops first must not leave an unhandled rejection.
        next.catch(() => undefined);
      }
      yield response;
      if (last) return;
    }
  }
  return paginate;
}

/** The API's way of saying "no such page": a 400 with message "totalPage is over.". */
function isPastLastPage(error: unknown): boolean {
  return error instanceof ExplorerHttpError && error.status === 400 && (error.apiMessage ?? "").includes("totalPage is over");
}
