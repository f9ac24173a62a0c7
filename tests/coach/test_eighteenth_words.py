"""The eighteenth session's words: a grader read 54 coaching messages on dev runs (34 appended) as the agent would.

Each test is a class of what it found: a cart-only task sent towards a checkout's sign-in, "end the run now" on a
page set to another zip code or past the page that held the task's number, counts that said less than the run
showed, the site opened twice in one message, and another run's value with the task's glue words in it.
"""

from __future__ import annotations

from coach import Neighbour, PartialRun, advise
from coach.plan import success_plan
from condenser import normalize_action

_DONE = "The task is complete: the page shows the result."


def _run(steps: list[dict], task: str, domain: str, **extra: object) -> PartialRun:
    return PartialRun.model_validate({"task": task, "domain": domain, "steps": steps, **extra})


_CART_STEPS = [{"action": "click[207]", "url": "https://www.amazon.com/Running-Sneakers/dp/B0B3XB64WM"},
               {"action": "click[285]", "url": "https://www.amazon.com/cart/add-to-cart?newItems=a6855558,1"},
               {"action": "click[162]", "url": "https://www.amazon.com/ap/signin?openid.mode=checkid_setup"}]


def test_a_task_that_ends_at_the_cart_is_not_sent_to_a_checkouts_sign_in():
    """The item was in the cart; the checkout's sign-in was met with "look for a way that needs no account (guest
    checkout, ...)": a purchase the task never asked for."""
    g = advise(_run(_CART_STEPS, "Find black running shoes under $50 and add them to my cart in amazon", "amazon.com"), [])
    assert g.intervene and "Your task ends at the cart" in g.advice, g.advice
    assert "do not sign in or check out" in g.advice and "guest checkout" not in g.advice
    assert "You reached the cart at /cart/add-to-cart before: go back to it" in g.advice
    never = _run([_CART_STEPS[0], _CART_STEPS[2]], "Add a pair of black running shoes to the cart in amazon", "amazon.com")
    assert "Go back (the browser's back) to the item's page, add it to the cart there" in advise(never, []).advice


def test_a_task_that_buys_keeps_the_guest_checkout():
    g = advise(_run(_CART_STEPS, "Add black running shoes to my cart and check out in amazon", "amazon.com"), [])
    assert "guest checkout" in g.advice and "ends at the cart" not in g.advice, g.advice


def test_the_done_belief_on_a_page_set_to_another_zip_code_names_both_codes():
    results = "https://www.ebay.com/sch/i.html?_nkw=washing+machine&_stpos=20147&_sadis=25&LH_LPickup=1"
    task = "Browse washing machines for free local pickup within 25 miles of zip code 90026 in ebay"
    steps = [{"action": "click[370]", "url": results, "thought": "I set local pickup."},
             {"action": "click[157]", "url": results, "thought": _DONE},
             {"action": "click[158]", "url": results, "thought": _DONE}]
    g = advise(_run(steps, task, "ebay.com"), [])
    assert "sets the zip or postal code 20147, where your task gives 90026" in g.advice, g.advice
    assert "Set the location to 90026" in g.advice and "end the run now" not in g.advice
    same = [{**s, "url": results.replace("20147", "90026")} for s in steps]
    assert "zip or postal code" not in advise(_run(same, task, "ebay.com"), []).advice  # the task's own code


def test_the_done_belief_past_the_page_that_held_the_tasks_number_names_that_page():
    task = "Locate the cvs pharmacy nearest to zip code 45201 that provides hair loss treatment in cvs"
    steps = [{"action": "fill_search[162,45201]", "url": "https://www.cvs.com/minuteclinic/clinic-locator/?q=45201"},
             {"action": "click[173]", "url": "https://www.cvs.com/minuteclinic/scheduling/search?clinicId=1338",
              "thought": _DONE},
             {"action": "click[10]", "url": "https://www.cvs.com/minuteclinic/info", "thought": _DONE},
             {"action": "click[11]", "url": "https://www.cvs.com/minuteclinic/info", "thought": _DONE}]
    g = advise(_run(steps, task, "cvs.com"), [])
    assert "no longer holds '45201' from your task in its address, as /minuteclinic/clinic-locator did" in g.advice, \
        g.advice
    assert "Go back to /minuteclinic/clinic-locator" in g.advice and "end the run now" not in g.advice
    held = [*steps[:2], {**steps[3], "url": "https://www.cvs.com/minuteclinic/clinic-locator/?q=45201&page=2"}]
    assert "no longer holds" not in advise(_run(held, task, "cvs.com"), []).advice  # the number still there


def test_actions_that_found_nothing_between_others_are_counted_among_the_steps_they_were_in():
    """"Your last 3 actions found no element" when a click came between them."""
    deal = "https://downunder-travel.com/trip/fiji-getaway-sale/"
    steps = [{"action": "click[73]", "url": "https://www.travelzoo.com/ca/destinations/fiji/"},
             {"action": "None", "url": "https://www.travelzoo.com/ca/destinations/fiji/"},
             {"action": "click[53]", "url": "https://www.travelzoo.com/ca/vacations/fiji-stay/"},
             {"action": "None", "url": deal}, {"action": "None", "url": deal}]
    g = advise(_run(steps, "Select a highly rated deal in Fiji in travelzoo", "travelzoo.com"), [])
    assert "3 of your last 4 actions found no element to act on" in g.advice, g.advice
    assert "Your last 3 actions" not in g.advice


def test_a_search_engines_pages_count_as_other_sites_in_words():
    """"2 of your last 4 pages were on other sites than resy.com" when all four were (two on google.com)."""
    google = "https://www.google.com/search?q=pasta+restaurant+in+Sydney"
    widget = "https://www.sevenrooms.com/reservations/ragazzi/rag-widget"
    steps = [{"action": "google_search[pasta restaurant in Sydney]", "url": google},
             {"action": "click[178]", "url": google + "&lqi=x"},
             {"action": "click[309]", "url": widget}, {"action": "click[310]", "url": widget}]
    g = advise(_run(steps, "Find a pasta restaurant in Sydney and save it in resy", "resy.com"), [])
    assert "and your last 4 pages were on other sites than resy.com" in g.advice and " of your last" not in g.advice, g.advice


def _won(task: str, domain: str, actions: list[str]) -> Neighbour:
    return Neighbour(id=3, similarity=0.9, success=True, task=task, domain=domain, summary="", n_steps=len(actions),
                     steps_brief=[{"norm": normalize_action(a), "action": a} for a in actions])


def test_a_message_that_sends_the_agent_to_the_site_does_not_say_it_twice():
    """"... go back to yelp.com, check ... You are on google.com, but a successful run ... did it on yelp.com: go back
    to yelp.com, then ..." said the way there twice."""
    won = _won("Search for Thai food located in Austin, TX in yelp", "yelp.com",
               ["CLICK [link] Yelp", "CLICK [link] Restaurants", "CLICK [link] Search", "TYPE: Thai food [textbox] Find",
                "TYPE: Austin, TX [textbox] Near", "CLICK [button] Search"])
    failed = [Neighbour(id=10 + i, similarity=0.9, success=False, task=won.task, domain="yelp.com", summary="",
                        n_steps=9) for i in range(4)]
    google = "https://www.google.com/search?q=McDonalds+Greenville+SC+Yelp"
    steps = [{"action": "google_search[McDonalds Greenville SC Yelp]", "url": google},
             {"action": "click[75]", "url": "https://www.yelp.com/biz/mcdonalds-greenville-16"},
             {"action": "google_search[Task completed]", "url": google, "thought": _DONE},
             {"action": "goto[https://www.google.com]", "url": "https://www.google.com/", "thought": _DONE}]
    g = advise(_run(steps, "Search for McDonalds located in Greenville, SC in yelp", "yelp.com"), [won, *failed])
    assert g.intervene and g.advice.count("yelp.com") >= 1, g.advice
    assert g.advice.count("go back to yelp.com") == 1, g.advice
    assert "There, a successful run of a task like yours went on to: " in g.advice


def test_another_runs_value_drops_the_words_that_tie_it_to_the_tasks_sentence():
    from coach.task_values import aligned_value

    assert aligned_value("Thai food", "Search for Thai food located in Austin, TX in yelp",
                         "Search for McDonalds located in Greenville, SC in yelp") == "McDonalds"
    assert aligned_value("Austin, TX", "Search for Thai food located in Austin, TX in yelp",
                         "Search for McDonalds located in Greenville, SC in yelp") == "Greenville, SC"


def test_a_plan_of_opening_the_site_and_typing_what_the_task_gives_is_no_plan():
    """"open parking.com, then type the value your task gives": nothing on the page is named."""
    won = _won("Browse events happening at Barclays Center in parking", "parking.com",
               ["TYPE: x [textbox]", "TYPE: y [textbox]", "TYPE: z [textbox]"])
    run = _run([{"action": "goto[https://www.msg.com]", "url": "https://www.msg.com/madison-square-garden"},
                {"action": "click[92]", "url": "https://www.msg.com/madison-square-garden"}],
               "Browse events happening at Madison Square Garden in parking", "parking.com")
    assert success_plan(run, [won], min_similarity=0.5) is None
    named = _won(won.task, "parking.com", ["CLICK [link] Events", "CLICK [link] Venues", "TYPE: x [textbox] Search venues",
                                           "CLICK [button] Search"])
    assert success_plan(run, [named], min_similarity=0.5) is not None


def test_a_review_that_asks_are_you_a_robot_deep_in_a_page_is_no_captcha():
    """The seventh red team: a product page whose review said "Are you a robot?" was a captcha to the coach, and the
    agent was told the site blocks it."""
    review = ("Product: Robot vacuum X200. Price $199. " + "Specs and details of the vacuum, its battery and its "
              "brushes. " * 40 + "Review by Sam: are you a robot? This vacuum cleans like one. 5 stars.")
    url = "https://www.bestbuy.com/site/robot-vacuum-x200/6500.p"
    page = [{"action": "click[4]", "url": url, "observation": review}, {"action": "scroll[down]", "url": url,
                                                                         "observation": review}]
    g = advise(_run(page, "Find the price of the X200 robot vacuum in bestbuy", "bestbuy.com"), [])
    assert "captcha" not in g.advice, g.advice
    check = "Are you a robot? Please complete the security check to continue."
    walled = [page[0], {**page[1], "observation": check}]
    assert "captcha or bot check" in advise(_run(walled, "Find the price of the X200 in bestbuy", "bestbuy.com"),
                                            []).advice
    top = [page[0], {**page[1], "observation": "Are you a robot? " + review}]  # the page opens with the question
    assert "captcha or bot check" in advise(_run(top, "Find the price of the X200 in bestbuy", "bestbuy.com"),
                                            []).advice


def test_the_word_captcha_in_an_articles_address_is_no_captcha():
    from coach.walls import WALLS, _url_shows

    assert not _url_shows(WALLS["captcha"], "https://www.wired.com/story/what-is-a-captcha-and-why/")
    assert _url_shows(WALLS["captcha"], "https://www.amazon.com/errors/validateCaptcha")
    assert _url_shows(WALLS["captcha"], "https://www.site.com/are-you-a-human")
    assert _url_shows(WALLS["captcha"], "https://www.site.com/captcha/check-me")


def test_a_site_whose_name_looks_like_the_tasks_is_said_to_be_another_address_without_naming_it():
    """The runs on tickets-center.com for "... in ticketcenter" failed; the ones that reached ticketcenter.com did. A
    grader took the look-alike for the task's site: the message says it is another address (never naming it)."""
    steps = [{"action": "google_search[MLB tickets ticketcenter]", "url": "https://www.google.com/search?q=mlb"},
             {"action": "click[5]", "url": "https://www.tickets-center.com/mlb"},
             {"action": "click[9]", "url": "https://www.tickets-center.com/mlb/this-weekend"}]
    g = advise(_run(steps, "Show MLB tickets for this weekend in ticketcenter", "ticketcenter.com"), [])
    assert "the site you are on now is not ticketcenter.com, though its name looks like it" in g.advice, g.advice
    assert "tickets-center" not in g.advice
    other = [{**s, "url": s["url"].replace("tickets-center.com", "stubhub.com")} for s in steps]
    assert "looks like it" not in advise(_run(other, "Show MLB tickets for this weekend in ticketcenter",
                                              "ticketcenter.com"), []).advice


def test_the_done_belief_names_the_tasks_conditions_that_neither_the_address_nor_the_notes_show():
    """"End the run now" backed a claim the run did not show (a grader: "the URL has no rating sort and no quote was
    requested"): the task's words that neither the address nor the agent's notes hold are named instead."""
    url = "https://www.yelp.com/search?cflt=electricians&find_loc=Westminster%2C+MD&attrs=is_fast_mtb_responder"
    task = "Find the fast responding highest-rated electrician in Westminster and request a quote in yelp"
    note = "I found fast responding electricians in Westminster. The task is complete."
    steps = [{"action": "click[64]", "url": url, "thought": note}, {"action": "click[65]", "url": url, "thought": note},
             {"action": "click[66]", "url": url, "thought": note}]
    g = advise(_run(steps, task, "yelp.com"), [])
    assert "Neither the page's address nor your notes show 'highest-rated', 'request' or 'quote' from your task" \
        in g.advice, g.advice
    assert "end the run now" not in g.advice and "'yelp'" not in g.advice and "'find'" not in g.advice
    said = [{**s, "thought": note + " It is the highest-rated one and I requested a quote."} for s in steps]
    assert "Neither the page" not in advise(_run(said, task, "yelp.com"), []).advice  # the notes show them all


def test_a_captcha_reached_from_a_search_result_sends_the_agent_to_the_site_directly_once():
    """A search result's link led straight into the bot check; the grader: "gives up at once" — the site's own
    address, opened directly, is the way not yet tried."""
    wall = "https://www.newegg.com/areyouahuman?referer=https%3A%2F%2Fwww.newegg.com%2Fp%2Fpl"
    steps = [{"action": "google_search[wireless printers above 4 stars on Newegg]",
              "url": "https://www.google.com/search?q=wireless+printers+newegg"},
             {"action": "click[1063]", "url": wall}, {"action": "click[1063]", "url": wall}]
    task = "Compare two wireless printers that are rated above 4 stars in newegg"
    g = advise(_run(steps, task, "newegg.com"), [])
    assert "reached from a search engine's link" in g.advice and "open newegg.com directly once" in g.advice, g.advice
    went = [{"action": "goto[https://www.newegg.com]", "url": wall}, *steps[1:]]
    assert "report that the site blocks automated access" in advise(_run(went, task, "newegg.com"), []).advice
    assert "open newegg.com directly once" not in advise(_run(went, task, "newegg.com"), []).advice


def test_on_the_sites_results_page_the_way_round_is_its_filters_not_its_search():
    """"Use the site's search" told an agent on /search?q=... what it had just done."""
    results = "https://soundcloud.com/search/sounds?q=south%20african%20history%20podcast"
    steps = [{"action": "click[12]", "url": results}] * 4
    task = "Find a South African history podcast of 10 to 30 minutes in soundcloud"
    g = advise(_run(steps, task, "soundcloud.com"), [])
    assert "this results page's filters or sort, or a search with other words" in g.advice, g.advice
    assert "the site's search" not in g.advice
    home = [{**s, "url": "https://soundcloud.com/discover"} for s in steps]
    assert "the site's search" in advise(_run(home, task, "soundcloud.com"), []).advice


def test_a_repeat_whose_first_click_led_to_the_page_says_the_others_changed_nothing():
    """"You have clicked 'X' 4 times ... and the address did not change" when the first click had opened the page."""
    steps = [{"action": "CLICK [link] Tours", "url": "https://www.sixflags.com/discoverykingdom"},
             *[{"action": "CLICK [link] Confirm Your Tour", "url": "https://www.sixflags.com/discoverykingdom/tours"}] * 4]
    g = advise(_run(steps, "Confirm my vip tour at Discovery Kingdom in sixflags", "sixflags.com"), [])
    assert "4 times on /discoverykingdom/tours and the address did not change after the first" in g.advice, g.advice
    same = [{**s, "url": "https://www.sixflags.com/discoverykingdom/tours"} for s in steps[1:]]
    said = advise(_run(same, "Confirm my vip tour at Discovery Kingdom in sixflags", "sixflags.com"), []).advice
    assert "and the address did not change." in said and "after the first" not in said, said


def test_a_plan_with_no_matching_action_starts_where_that_run_stood_on_the_agents_page():
    """"click 'APPLY'" was said to an agent that had only opened the home page four times: position alone put it
    four steps into the other run."""
    home, results = "https://www.newegg.com/", "https://www.newegg.com/p/pl?d=xbox+controller"
    rated = results + "&N=4131"
    brief = [{"norm": normalize_action(a), "action": a, "url": u} for a, u in (
        ("TYPE: xbox controller [searchbox] Search Site", results), ("CLICK [dt] Customer Ratings", results),
        ("CLICK [div] 4 & up", rated), ("CLICK [button] APPLY", rated), ("CLICK [link] Controller X", rated))]
    won = Neighbour(id=3, similarity=0.9, success=True, task="Find an Xbox controller rated above 4 stars in newegg",
                    domain="newegg.com", summary="", n_steps=5, steps_brief=brief)
    task = "Find an Xbox Wireless controller rated above 4 stars in newegg"
    at_home = _run([{"action": f"goto[{home}]", "url": home}] * 4, task, "newegg.com")
    plan = success_plan(at_home, [won], min_similarity=0.5)
    assert plan is not None and plan.steps[0].startswith("fill in the 'Search Site' field"), plan
    on_results = _run([{"action": f"goto[{home}]", "url": home}] * 3 + [{"action": "click[7]", "url": results}], task,
                      "newegg.com")
    plan = success_plan(on_results, [won], min_similarity=0.5)
    assert plan is not None and plan.steps[0] == "click '4 & up'", plan  # its last step that ended on the results


def test_the_done_belief_never_sends_a_find_task_back_to_the_cart():
    """"Open the page that showed it again (you were at /cart before)" for "Find hard side carry-on luggage": the
    cart was past the task; the product page was its result."""
    product = "https://www.target.com/p/carry-on-black/-/A-123"
    steps = [{"action": "click[210]", "url": product}, {"action": "click[93]", "url": "https://www.target.com/cart"},
             {"action": "click[12]", "url": "https://www.target.com/", "thought": _DONE},
             {"action": "click[15]", "url": "https://www.target.com/", "thought": _DONE},
             {"action": "click[12]", "url": "https://www.target.com/", "thought": _DONE}]
    g = advise(_run(steps, "Find hard side carry-on luggage in black color in target", "target.com"), [])
    assert "/cart" not in g.advice and "you were at /p/" in g.advice, g.advice
    cart = advise(_run(steps[1:], "Add hard side carry-on luggage in black to my cart in target", "target.com"), [])
    assert "you were at /cart before" in cart.advice, cart.advice  # a task that ends at the cart: its result


def test_the_done_belief_on_a_home_page_the_run_never_left_says_so():
    """Six clicks on boardgamegeek.com's home page, notes that say "done": "if the page shows everything ... end the
    run now" let it stop on a page that shows nothing of "recent trades"."""
    home = "https://boardgamegeek.com/"
    steps = [{"action": "goto[https://www.boardgamegeek.com/]", "url": home}] + [
        {"action": "click[46]", "url": home, "thought": _DONE}] * 4
    g = advise(_run(steps, "Show me the recent trades in boardgamegeek", "boardgamegeek.com"), [])
    assert "you are still on boardgamegeek.com's home page" in g.advice, g.advice
    assert "this run has opened none of its other pages" in g.advice and "end the run now" not in g.advice
    index = [{**s, "url": "https://www.nps.gov/index.htm"} for s in steps]  # "/index.htm" is a home page too
    said = advise(_run(index, "Show me a list of children's program events in Illinois in nps.gov", "nps.gov"), [])
    assert "you are still on nps.gov's home page" in said.advice, said.advice


def test_the_next_step_said_in_the_advice_is_not_said_again():
    """"... Open resy.com (navigate to its address) and do the task there." then "Try next: open resy.com.": twice."""
    steps = [{"action": "google_search[pasta restaurant in Sydney]", "url": "https://www.google.com/search?q=pasta"},
             {"action": "click[309]", "url": "https://www.sevenrooms.com/reservations/ragazzi"},
             {"action": "click[310]", "url": "https://www.sevenrooms.com/reservations/ragazzi"}]
    g = advise(_run(steps, "Find a pasta restaurant in Sydney and save it in resy", "resy.com"), [])
    assert g.suggested_action == "open resy.com" and g.system_message is not None
    assert g.system_message.content.casefold().count("open resy.com") == 1, g.system_message.content


def test_scrolling_through_a_list_the_notes_say_they_see_is_not_a_repeat():
    """Seven scrolls down a profile's liked posts, the note "I can see Taylor Swift's liked posts. Let me scroll down
    to see more": the run succeeded; "if these brought nothing new ..." was noise. On the Online-Mind2Web and
    webcanvas dev runs the scroll repeat now speaks on 2 successful runs and no failed one (22 and 4 before:
    `test_dev_runs_where_the_scroll_repeat_speaks`)."""
    steps = [{"action": "Navigate to https://www.tumblr.com/taylorswift"}] + [
        {"action": "Scroll (delta_x=0, delta_y=600)"}] * 6 + [
        {"action": "Scroll (delta_x=0, delta_y=600)", "thought": "I can see Taylor Swift's liked posts. Let me scroll "
                                                                  "down to see more of them and gather a list."}]
    g = advise(_run(steps, "Find the posts liked by the user Taylor Swift on Tumblr.", "tumblr.com"), [])
    assert "scrolled" not in g.advice, g.advice
    stuck = steps[:-1] + [{"action": "Scroll (delta_x=0, delta_y=600)", "thought": "The page did not change."}]
    assert "You have scrolled 7 times" in advise(_run(stuck, "Find the posts liked by the user Taylor Swift on "
                                                             "Tumblr.", "tumblr.com"), []).advice


def test_dev_runs_where_the_scroll_repeat_speaks():
    """The README's figure: over every prefix of the webcanvas and Online-Mind2Web dev runs, the scroll repeat speaks
    on 2 successful runs and no failed one (22 and 4 before the latest note's progress counted)."""
    from coach.runstate import _repeat
    from ems_service.dataset import dev_data_dir, read_jsonl

    fired = {True: 0, False: 0}
    for name in ("webcanvas.jsonl", "online_mind2web_abp.jsonl"):
        for t in (ln.trajectory for ln in read_jsonl(dev_data_dir() / name) if ln.trajectory):
            for k in range(3, len(t.steps) + 1):
                signal = _repeat(PartialRun(task=t.task, steps=t.steps[:k], domain=t.domain))
                if signal and signal.facts.get("action") == "scroll":
                    fired[bool(t.outcome.success)] += 1
                    break
    assert fired == {True: 2, False: 0}, fired
