//! Trello board exports: cards, lists, and the list moves in `actions` (at most 1,000 per export).

use std::collections::HashMap;
use std::path::Path;

use jiff::Timestamp;
use jiff::tz::TimeZone;

use super::json::{Obj, parse_document};
use super::status::category_of_status;
use super::{Board, BoardError, Record, StatusChange, Task, closed_at_from_history, reopens};

const EXAMPLE: &str = "2025-11-04T09:00:00.000Z";

/// How many actions a Trello board export holds at most.
const ACTION_LIMIT: usize = 1000;

#[derive(Default)]
struct CardActions {
    /// When and into which list the card was created.
    created: Option<(Timestamp, Option<String>)>,
    moves: Vec<StatusChange>,
}

pub(super) fn read(path: &Path, bytes: &[u8], tz: &TimeZone, board: &mut Board) -> Result<(), BoardError> {
    let doc = parse_document(path, bytes)?;
    let root = Obj::root(&doc).map_err(|m| BoardError::format(path, format!("not a Trello board export: {m}")))?;
    let cards = match root.arr("cards") {
        Ok(Some(cards)) => cards,
        Ok(None) => {
            return Err(BoardError::format(
                path,
                "no \"cards\" array: not a Trello board export",
            ));
        }
        Err(message) => return Err(BoardError::format(path, message)),
    };

    let mut lists: HashMap<&str, &str> = HashMap::new();
    for (index, list) in root
        .arr("lists")
        .map_err(|m| BoardError::format(path, m))?
        .unwrap_or(&[])
        .iter()
        .enumerate()
    {
        let record = Record::Item { array: "lists", index };
        let (id, name) = Obj::root(list)
            .and_then(|list| Ok((list.req_str("id")?, list.str("name")?.unwrap_or_default())))
            .map_err(|message| BoardError::invalid(path, record, message))?;
        lists.insert(id, name);
    }

    let actions = root
        .arr("actions")
        .map_err(|m| BoardError::format(path, m))?
        .unwrap_or(&[]);
    let mut by_card: HashMap<&str, CardActions> = HashMap::new();
    for (index, action) in actions.iter().enumerate() {
        let record = Record::Item {
            array: "actions",
            index,
        };
        read_action(action, tz, &mut by_card).map_err(|message| BoardError::invalid(path, record, message))?;
    }

    let mut undated = 0;
    for (index, card) in cards.iter().enumerate() {
        let record = Record::Item { array: "cards", index };
        let task = read_card(card, record, &lists, &mut by_card).map_err(|m| BoardError::invalid(path, record, m))?;
        undated += usize::from(task.is_closed() && task.completed.is_none());
        board.tasks.push(task);
    }
    if actions.len() >= ACTION_LIMIT {
        board.notes.push(format!(
            "the export holds {} actions, Trello's limit: older list moves are missing, so histories, reopens and \
             completion times can be incomplete",
            actions.len()
        ));
    }
    if undated > 0 {
        board.notes.push(format!(
            "{undated} done or cancelled cards have no recorded move into their list: their completion time is \
             unknown"
        ));
    }
    Ok(())
}

fn read_action<'a>(
    value: &'a serde_json::Value,
    tz: &TimeZone,
    by_card: &mut HashMap<&'a str, CardActions>,
) -> Result<(), String> {
    let action = Obj::root(value)?;
    let kind = action.str("type")?.unwrap_or_default();
    let creation = matches!(kind, "createCard" | "copyCard" | "convertToCardFromCheckItem");
    if !creation && kind != "updateCard" {
        return Ok(());
    }
    let data = action.obj("data")?.ok_or_else(|| action.missing("data"))?;
    let Some(card) = data.obj("card")? else {
        return Ok(());
    };
    let card_id = card.req_str("id")?;
    let list_name = |key: &str| -> Result<Option<String>, String> {
        Ok(match data.obj(key)? {
            Some(list) => Some(list.str("name")?.unwrap_or_default().to_owned()),
            None => None,
        })
    };
    if creation {
        let at = action
            .time("date", tz, EXAMPLE)?
            .ok_or_else(|| action.missing("date"))?;
        let list = list_name("list")?;
        let entry = by_card.entry(card_id).or_default();
        if entry.created.as_ref().is_none_or(|(t, _)| at < *t) {
            entry.created = Some((at, list));
        }
    } else if let Some(to) = list_name("listAfter")? {
        let at = action
            .time("date", tz, EXAMPLE)?
            .ok_or_else(|| action.missing("date"))?;
        let to_category = category_of_status(&to);
        by_card.entry(card_id).or_default().moves.push(StatusChange {
            at,
            from: list_name("listBefore")?,
            to,
            to_category,
            provenance: None,
        });
    }
    Ok(())
}

fn read_card(
    value: &serde_json::Value,
    record: Record,
    lists: &HashMap<&str, &str>,
    by_card: &mut HashMap<&str, CardActions>,
) -> Result<Task, String> {
    let card = Obj::root(value)?;
    let id = card.req_str("id")?;
    let mut task = Task::new(id, record);
    task.title = card.str("name")?.unwrap_or_default().to_owned();
    task.url = card.text("url")?.or(card.text("shortUrl")?).map(str::to_owned);
    card.bool("closed")?;
    for label in card.objects("labels")? {
        let name = label.text("name")?.or(label.text("color")?);
        task.labels.extend(name.map(str::to_owned));
    }
    let actions = by_card.remove(id).unwrap_or_default();
    let mut history = actions.moves;
    history.sort_by_key(|c| c.at);

    let list = card.text("idList")?;
    task.status = match list.and_then(|l| lists.get(l)) {
        Some(name) => (*name).to_owned(),
        None => match history.last() {
            Some(last) => last.to.clone(),
            None => list.unwrap_or_default().to_owned(),
        },
    };
    task.status_category = category_of_status(&task.status);
    task.created = match &actions.created {
        Some((at, _)) => Some(*at),
        None => object_id_time(id),
    };
    task.completed = closed_at_from_history(&history, task.status_category).or_else(|| {
        let (at, list) = actions.created.as_ref()?;
        let created_closed = list.as_deref().is_some_and(|l| category_of_status(l).is_closed());
        (task.status_category.is_closed() && created_closed).then_some(*at)
    });
    task.reopened_at = reopens(&history, category_of_status);
    task.history = Some(history);
    Ok(task)
}

/// The creation time in a Trello id (a MongoDB ObjectId: the first 8 hex digits are Unix seconds).
fn object_id_time(id: &str) -> Option<Timestamp> {
    if id.len() != 24 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let seconds = u32::from_str_radix(&id[..8], 16).ok()?;
    Timestamp::from_second(i64::from(seconds)).ok()
}
